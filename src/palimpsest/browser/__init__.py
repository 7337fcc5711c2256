"""Neo4j Browser that explains itself: a style file and a ``:play`` guide the API serves.

The guide is fetched by Neo4j Browser from another origin (its own port), so the route answers
with a CORS header; it holds only static text. Its first slide carries the style as a runnable
``:style`` command, so one click loads it.
"""

from __future__ import annotations

import functools
from importlib.resources import files

from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response

GUIDE_PATH = "/browser-guide"
STYLE_PATH = "/browser-style.grass"
# Browser asks with no-cache headers, so Chromium sends a preflight first; both answers allow
# any origin (the content is static text) and a page on another loopback port.
_CORS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Methods": "GET, OPTIONS",
    "Access-Control-Allow-Headers": "*",
    "Access-Control-Allow-Private-Network": "true",
    "Cache-Control": "no-cache",
}


@functools.cache
def style() -> str:
    return files("palimpsest.browser").joinpath("style.grass").read_text(encoding="utf-8")


@functools.cache
def guide() -> str:
    page = files("palimpsest.browser").joinpath("guide.html").read_text(encoding="utf-8")
    one_line = " ".join(style().split())
    return page.replace("__GRASS__", one_line.replace("&", "&amp;").replace("<", "&lt;"))


async def guide_page(request: Request) -> Response:
    if request.method == "OPTIONS":
        return Response(status_code=204, headers=_CORS)
    return HTMLResponse(guide(), headers=_CORS)


async def style_file(request: Request) -> Response:
    if request.method == "OPTIONS":
        return Response(status_code=204, headers=_CORS)
    return PlainTextResponse(style(), headers=_CORS)
