"""The GraphQL doors in unit tests: a query run through the product's schema with a context
whose services sit on the recording executor (``tests/unit/recording.py``), so a test checks
what a field asked the resolvers for and how it shaped the answer, with no server."""

from __future__ import annotations

from functools import cache
from typing import Any

from starlette.requests import Request

from palimpsest.graphql.context import Context
from palimpsest.graphql.errors import CodedSchema
from palimpsest.graphql.schema import build_schema
from palimpsest.identity import Principal
from palimpsest.resolvers.services import Services


@cache
def schema() -> CodedSchema:
    return build_schema()


def request() -> Request:
    return Request({"type": "http", "method": "POST", "path": "/graphql", "headers": []})


async def answer(
    svc: Services, who: Principal | None, query: str, **variables: Any
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The data and the errors' extensions (each with its ``code``) of ``query``."""
    context = Context(request=request(), response=None, services=svc, caller=who)
    result = await schema().execute(query, variable_values=variables, context_value=context)
    errors = [dict(e.extensions or {}) | {"message": e.message} for e in result.errors or []]
    return result.data, errors
