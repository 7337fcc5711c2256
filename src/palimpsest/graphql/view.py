"""The strawberry ASGI view: orjson on the wire, the typed context, GraphiQL served offline."""

from __future__ import annotations

import json
from typing import Any

import orjson
from starlette.authentication import BaseUser
from starlette.requests import Request
from starlette.responses import Response
from starlette.websockets import WebSocket
from strawberry.asgi import GraphQL

from palimpsest.graphql.context import Context
from palimpsest.graphql.ide import ide_html
from palimpsest.identity import Principal
from palimpsest.resolvers.services import Services

ASSETS_PATH = "/graphql/assets"


class GraphQLView(GraphQL[Context, None]):
    @property
    def graphql_ide_html(self) -> str:
        return ide_html(ASSETS_PATH)

    def encode_json(self, data: object) -> bytes:
        return orjson.dumps(data)

    def decode_json(self, data: str | bytes) -> Any:
        # The standard parser keeps big integers exact (orjson would turn them into floats,
        # silently changing the value), so the value check can refuse them by name.
        return json.loads(data, parse_constant=_no_constants)

    async def get_context(
        self, request: Request | WebSocket, response: Response | WebSocket | None
    ) -> Context:
        services: Services = request.app.state.services
        user = request.scope.get("user")
        caller = user.principal if isinstance(user, AuthenticatedCaller) else None
        assert isinstance(request, Request)
        return Context(
            request=request,
            response=response if isinstance(response, Response) else None,
            services=services,
            caller=caller,
        )


def _no_constants(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


class AuthenticatedCaller(BaseUser):
    """What the authentication middleware puts on ``request.user``."""

    @property
    def is_authenticated(self) -> bool:
        return True

    def __init__(self, principal: Principal) -> None:
        self.principal = principal

    @property
    def display_name(self) -> str:
        return self.principal.user_id or self.principal.agent_name or self.principal.tenant_id
