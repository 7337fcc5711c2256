"""The per-request context every resolver receives."""

from __future__ import annotations

from dataclasses import dataclass

from graphql import DocumentNode
from starlette.requests import Request
from starlette.responses import Response
from strawberry.types import Info as _Info

from palimpsest.errors import Unauthenticated
from palimpsest.identity import Principal
from palimpsest.resolvers.services import Services


@dataclass
class Context:
    request: Request
    response: Response | None
    services: Services
    caller: Principal | None
    # Parsed, limit-checked and validated by the view off the event loop (view.py).
    document: DocumentNode | None = None

    @property
    def principal(self) -> Principal:
        """The verified caller; every data field goes through here, so no token, no data."""
        if self.caller is None:
            raise Unauthenticated("send `Authorization: Bearer <run token>` to use this field")
        return self.caller


Info = _Info[Context, None]
