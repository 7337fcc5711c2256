"""``X-Palimpsest-Bookmark`` in and out of a request, sealed for its caller
(cypher/driver/causal.py)."""

from __future__ import annotations

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from palimpsest.cypher.driver import causal
from palimpsest.errors import PalimpsestError


class CausalBookmarks:
    """Opens the sealed ``X-Palimpsest-Bookmark`` into the request's causal scope and returns
    the bookmarks the request ended with, sealed for the same caller, in the same header (see
    cypher/driver/causal.py). After authentication: a seal is bound to the verified principal."""

    def __init__(self, app: ASGIApp, seal: causal.BookmarkSeal) -> None:
        self.app = app
        self.seal = seal

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        principal = getattr(scope.get("user"), "principal", None)
        try:
            given = self.seal.open(Headers(scope=scope).get(causal.HEADER), principal)
        except PalimpsestError as e:
            body = {"errors": [{"message": e.message, "extensions": {"code": e.code}}]}
            await JSONResponse(body, status_code=400)(scope, receive, send)
            return
        # The caller's tenant: with tenant shards, its shard serves the request's work.
        tenant = principal.tenant_id if principal is not None else None
        with causal.request_scope(given, tenant) as seen:

            async def with_bookmarks(message: Message) -> None:
                if message["type"] == "http.response.start" and seen.seen:
                    value = self.seal.seal(seen.seen, principal)
                    MutableHeaders(scope=message).append(causal.HEADER, value)
                await send(message)

            await self.app(scope, receive, with_bookmarks)
