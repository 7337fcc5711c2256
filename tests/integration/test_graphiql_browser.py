"""GraphiQL really renders and runs queries in a browser with every non-local request blocked.

Strawberry's stock page loads React/GraphiQL from a CDN and hangs on "Loading..." offline; this
proves ours needs nothing but the server it came from.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.async_api import Page, Request, Route, async_playwright
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

CHROMIUM = Path(os.environ.get("PALIMPSEST_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
QUERY_EDITOR = ".graphiql-query-editor .CodeMirror"
HEADERS_EDITOR = ".graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror"
RESULT = ".result-window .CodeMirror"
PLACEHOLDER = "Bearer <paste-your-token-here>"
UI_TIMEOUT_MS = 20_000

# No skip when Chromium is missing: `make test` installs it, and a missing browser must fail.


async def _set_editor(page: Page, selector: str, text: str) -> None:
    # GraphiQL 3 uses CodeMirror 5; its API on the element is steadier than simulated typing.
    await page.locator(selector).evaluate("(el, text) => el.CodeMirror.setValue(text)", text)


async def _editor_text(page: Page, selector: str) -> str:
    text = await page.locator(selector).evaluate("el => el.CodeMirror.getValue()")
    assert isinstance(text, str)
    return text


async def _run(page: Page, query: str) -> str:
    """Run ``query`` from the editor and return the result pane's text once it fills."""
    await _set_editor(page, RESULT, "")
    await _set_editor(page, QUERY_EDITOR, query)
    await page.locator(".graphiql-execute-button").click()
    await page.wait_for_function(
        "sel => document.querySelector(sel).CodeMirror.getValue().trim() !== ''",
        arg=RESULT,
        timeout=UI_TIMEOUT_MS,
    )
    return await _editor_text(page, RESULT)


async def test_graphiql_works_offline(live_server_url: str, dev_token: str) -> None:
    server_host = urlsplit(live_server_url).hostname
    assert server_host is not None
    blocked: list[str] = []
    foreign: list[str] = []
    graphql_posts: list[dict[str, str]] = []
    page_errors: list[str] = []

    async def only_local(route: Route) -> None:
        if urlsplit(route.request.url).hostname == server_host:
            await route.continue_()
        else:
            blocked.append(route.request.url)
            await route.abort("internetdisconnected")

    def watch(request: Request) -> None:
        parts = urlsplit(request.url)
        if parts.scheme in {"http", "https", "ws", "wss"} and parts.hostname != server_host:
            foreign.append(request.url)
        if request.method == "POST" and parts.path == "/graphql":
            graphql_posts.append(request.headers)

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = await browser.new_context()
            await context.route("**/*", only_local)
            page = await context.new_page()
            page.on("request", watch)
            page.on("pageerror", lambda exc: page_errors.append(str(exc)))

            await page.goto(f"{live_server_url}/graphql")
            try:
                await page.locator(QUERY_EDITOR).wait_for(timeout=UI_TIMEOUT_MS)
            except PlaywrightTimeoutError:
                pytest.fail(f"GraphiQL never rendered; blocked requests: {blocked}")

            # The headers editor starts with a placeholder the user overwrites with a token...
            headers_text = await _editor_text(page, HEADERS_EDITOR)
            assert json.loads(headers_text) == {"Authorization": PLACEHOLDER}

            # ...and the untouched placeholder is never sent, so token-free queries still work.
            result = await _run(page, "{ __typename }")
            assert '"__typename": "Query"' in result
            assert json.loads(result) == {"data": {"__typename": "Query"}}
            assert graphql_posts, "GraphiQL sent no POST to /graphql"
            assert all("authorization" not in h for h in graphql_posts), graphql_posts

            # A pasted token reaches the server and unlocks data fields.
            auth = {"Authorization": f"Bearer {dev_token}"}
            await _set_editor(page, HEADERS_EDITOR, json.dumps(auth))
            result = await _run(page, "{ me { tenant } }")
            body = json.loads(result)
            assert "errors" not in body, body
            assert isinstance(body["data"]["me"]["tenant"], str)
            assert graphql_posts[-1].get("authorization") == f"Bearer {dev_token}"
        finally:
            await browser.close()

    assert blocked == [], f"page tried to reach the network: {blocked}"
    assert foreign == [], f"requests to non-local hosts: {foreign}"
    assert page_errors == [], page_errors
