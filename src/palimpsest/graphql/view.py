"""The strawberry ASGI view: orjson on the wire, the typed context, GraphiQL served offline.

Every request passes the edge checks in this order, and every refusal is one GraphQL-shaped
error with ``extensions.code``, never a plain-text status:

1. a bad bearer token: 401 (the authentication middleware, before the body is read);
2. the body's size: over ``max_request_bytes`` 413; without a token, over
   ``anonymous_max_bytes`` 401;
3. the body itself: not UTF-8 JSON, not an object with a ``query`` string, or a lone UTF-16
   surrogate anywhere in it: 400 ``INVALID_ARGUMENT``;
4. without a token, a document that is more than ``health``/``__typename``/introspection: 401;
5. parse within the token budget, shape and cost limits, validation, all on a worker thread;
   a document the caller's tenant sent before comes from ``DocumentCache`` and only its cost
   limits are checked again (they read the variables).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import orjson
from cross_web import AsyncHTTPRequestAdapter, HTTPException
from graphql import DocumentNode
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import Receive, Scope, Send
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL
from strawberry.extensions import SchemaExtension
from strawberry.http import GraphQLRequestData
from strawberry.http.parse_content_type import parse_content_type
from strawberry.types import ExecutionResult

from palimpsest.errors import InvalidArgument, PalimpsestError, Unauthenticated
from palimpsest.graphql.context import Context
from palimpsest.graphql.document_cache import DocumentCache, cost_errors
from palimpsest.graphql.errors import CodedSchema
from palimpsest.graphql.ide import ide_html
from palimpsest.graphql.limits import EdgeLimits, anonymous_document, prepare
from palimpsest.identity import Principal

# AuthenticatedCaller is the middleware's; still importable from here (it was defined here).
from palimpsest.middleware.auth import AuthenticatedCaller as AuthenticatedCaller
from palimpsest.middleware.replay import replay
from palimpsest.resolvers.services import Services

ASSETS_PATH = "/graphql/assets"
# Bodies above this are decoded on a worker thread too.
_DECODE_INLINE_BYTES = 64 * 1024
_SURROGATE = re.compile("[\ud800-\udfff]")
# Parsing and validation of admitted documents; two threads keep a flood from taking every
# core while the event loop keeps answering.
_PREPARE = ThreadPoolExecutor(max_workers=2, thread_name_prefix="graphql-prepare")


class Refused(Exception):
    """A request refused before GraphQL runs: an HTTP status and one coded error."""

    def __init__(self, status: int, error: PalimpsestError) -> None:
        super().__init__(error.message)
        self.status = status
        self.error = error


def error_response(status: int, error: PalimpsestError) -> Response:
    body = {"errors": [{"message": error.message, "extensions": error_extensions(error)}]}
    return JSONResponse(body, status_code=status)


def error_extensions(error: PalimpsestError) -> dict[str, Any]:
    return {"code": error.code.value, **error.details}


class GraphQLView(GraphQL[Context, None]):
    def __init__(self, schema: CodedSchema, limits: EdgeLimits, cached_documents: int = 0) -> None:
        super().__init__(schema)
        self.coded_schema = schema
        self.limits = limits
        self.documents = DocumentCache(cached_documents)

    @property
    def graphql_ide_html(self) -> str:
        return ide_html(ASSETS_PATH)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await super().__call__(scope, receive, send)
            return
        try:
            request = Request(scope, receive)
            if request.method == "POST":
                body = await self._read_body(request, _caller(scope) is not None)
                request = Request(scope, replay(body, receive))
            response = await self.run(request)
        except Refused as e:
            response = error_response(e.status, e.error)
        except HTTPException as e:
            # strawberry's own refusals (unknown operation name, a mutation over GET, ...).
            response = error_response(e.status_code, InvalidArgument(e.reason))
        await response(scope, receive, send)

    async def _read_body(self, request: Request, authenticated: bool) -> bytes:
        limit = self.limits.max_request_bytes if authenticated else self.limits.anonymous_max_bytes

        def too_big() -> Refused:
            if not authenticated:
                return Refused(401, _anonymous_refusal(self.limits))
            return Refused(
                413,
                InvalidArgument(
                    f"the request body is over {limit} bytes (PALIMPSEST_MAX_REQUEST_BYTES)",
                    limit="maxRequestBytes",
                    allowed=limit,
                ),
            )

        declared = request.headers.get("content-length", "")
        if declared.isdigit() and (len(declared) > 18 or int(declared) > limit):
            raise too_big()
        chunks: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise too_big()
            chunks.append(chunk)
        return b"".join(chunks)

    async def parse_http_body(self, request: AsyncHTTPRequestAdapter) -> GraphQLRequestData:
        if request.method == "GET":
            data: Any = self.parse_query_params(request.query_params)
        else:
            content_type, _ = parse_content_type(request.content_type or "")
            if "application/json" not in content_type:
                refusal = InvalidArgument("send JSON (Content-Type: application/json)")
                raise Refused(400, refusal)
            body = await request.get_body()
            if len(body) > _DECODE_INLINE_BYTES:
                data = await asyncio.get_running_loop().run_in_executor(
                    _PREPARE, self.parse_json, body
                )
            else:
                data = self.parse_json(body)
        return _request_data(data)

    def parse_json(self, data: str | bytes) -> Any:
        try:
            text = data.decode() if isinstance(data, bytes) else data
            # The standard parser keeps big integers exact (orjson would turn them into
            # floats, silently changing the value), so the value check can refuse them by name.
            value = json.loads(text, parse_constant=_no_constants)
        except (ValueError, RecursionError) as e:
            raise Refused(
                400,
                InvalidArgument(
                    "the request is not valid JSON (UTF-8, nested at most 1000 levels, "
                    "integers of at most 4300 digits)"
                ),
            ) from e
        if _has_surrogate(value):
            # Refused whole and never echoed: a lone surrogate cannot be stored, embedded or
            # even encoded into a UTF-8 response.
            refusal = InvalidArgument("the request contains a lone UTF-16 surrogate (U+D800-DFFF)")
            raise Refused(400, refusal)
        return value

    def decode_json(self, data: str | bytes) -> Any:
        return self.parse_json(data)

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)

    async def execute_single(
        self,
        request: Request,
        request_adapter: AsyncHTTPRequestAdapter,
        sub_response: Response,
        context: Context,
        root_value: None,
        request_data: GraphQLRequestData,
    ) -> ExecutionResult:
        query = request_data.query or ""
        document: DocumentNode | None = None
        if context.caller is None:
            document = anonymous_document(query, self.limits)
            if document is None:
                raise Refused(401, _anonymous_refusal(self.limits))
        key = (
            None if context.caller is None else self.documents.key(context.caller.tenant_id, query)
        )
        cached = self.documents.get(key) if key is not None else None
        if cached is not None:
            document = cached
            errors = cost_errors(
                self.coded_schema._schema, cached, request_data.variables, self.limits
            )
        else:
            loop = asyncio.get_running_loop()
            work = partial(
                prepare,
                self.coded_schema._schema,
                query,
                request_data.variables,
                self.limits,
                document,
            )
            document, errors = await loop.run_in_executor(_PREPARE, work)
            if document is not None and key is not None:
                self.documents.put(key, document)
        if document is None or errors:
            self.schema.process_errors(errors, None)
            return ExecutionResult(data=None, errors=errors)
        context.document = document
        return await super().execute_single(
            request=request,
            request_adapter=request_adapter,
            sub_response=sub_response,
            context=context,
            root_value=root_value,
            request_data=request_data,
        )

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket | None
    ) -> Context:
        services: Services = request.state.services
        assert isinstance(request, Request)
        return Context(
            request=request,
            response=response if isinstance(response, Response) else None,
            services=services,
            caller=_caller(request.scope),
        )


class PreparedDocument(SchemaExtension):
    """Hands strawberry the document the view parsed and validated off the event loop."""

    def on_parse(self) -> Iterator[None]:
        context = self.execution_context.context
        if isinstance(context, Context) and context.document is not None:
            self.execution_context.graphql_document = context.document
        yield

    def on_validate(self) -> Iterator[None]:
        context = self.execution_context.context
        prepared = isinstance(context, Context) and context.document is not None
        if prepared and self.execution_context.graphql_document is context.document:
            self.execution_context.pre_execution_errors = []  # validated already; skip
        yield


def _request_data(data: Any) -> GraphQLRequestData:
    if not isinstance(data, dict):
        raise Refused(400, InvalidArgument("the request must be a JSON object with a `query`"))
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise Refused(400, InvalidArgument("the request has no GraphQL `query` string"))
    for name, kinds in (("variables", dict), ("extensions", dict), ("operationName", str)):
        value = data.get(name)
        if value is not None and not isinstance(value, kinds):
            kind = "an object" if kinds is dict else "a string"
            raise Refused(400, InvalidArgument(f"`{name}` must be {kind}"))
    return GraphQLRequestData(
        query=query,
        variables=data.get("variables"),
        operation_name=data.get("operationName"),
        extensions=data.get("extensions"),
    )


def _has_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii() and _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _anonymous_refusal(limits: EdgeLimits) -> Unauthenticated:
    return Unauthenticated(
        "send `Authorization: Bearer <run token>`; without a token only `health`, "
        f"`__typename` and introspection are served, in bodies of at most "
        f"{limits.anonymous_max_bytes} bytes"
    )


def _caller(scope: Scope) -> Principal | None:
    user = scope.get("user")
    return user.principal if isinstance(user, AuthenticatedCaller) else None


def _no_constants(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)
