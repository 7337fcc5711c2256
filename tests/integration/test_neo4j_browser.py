"""Neo4j Browser explains the memory: typed entity colours, predicate captions, the guide.

Headless Chromium drives the real Neo4j Browser of the running server: it connects, loads the
shipped style with `:style`, draws a tenant's facts and plays the guide the API serves. The
drawn SVG is checked (captions, colours per type) and screenshots are kept for a person.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path

from playwright.async_api import Page, async_playwright

from palimpsest.browser import GUIDE_PATH, style
from palimpsest.config import Settings
from palimpsest.local.neo4j import credentials
from tests.integration.conftest import Gql
from tests.integration.test_graphiql_browser import CHROMIUM, CHROMIUM_ARGS

SHOTS = Path(os.environ.get("PALIMPSEST_SCREENSHOTS", "/tmp/palimpsest-screenshots"))
UI_TIMEOUT_MS = 60_000
ASSERT = """mutation($facts: [FactInput!]!) {
  assertFacts(scope: USER, facts: $facts, place: false) { created }
}"""


def _fact(subject: tuple[str, str], predicate: str, obj: tuple[str, str]) -> dict[str, object]:
    return {
        "subject": {"type": subject[0], "name": subject[1]},
        "predicate": predicate,
        "object": {"type": obj[0], "name": obj[1]},
    }


async def _command(page: Page, text: str) -> None:
    """Type into the main editor and run it, as a person would."""
    editor = page.locator("#monaco-main-editor")
    await editor.click()
    await page.keyboard.press("Control+A")
    await page.keyboard.press("Delete")
    await page.keyboard.insert_text(text)
    await page.keyboard.press("Control+Enter")


async def test_browser_shows_typed_entities_predicates_and_the_guide(
    settings: Settings,
    live_server_url: str,
    gql: Gql,
    token: Callable[..., str],
) -> None:
    tenant = f"t-{uuid.uuid4().hex[:10]}"  # only this test's facts in the picture
    raw = token(tenant, "browser-user")
    facts = [
        _fact(("person", "Dana"), "lives in", ("city", "Lisbon")),
        _fact(("person", "Dana"), "works at", ("company", "Acme Ferries")),
        _fact(("person", "Eli"), "lives in", ("city", "Porto")),
    ]
    body = gql(ASSERT, raw, facts=facts)
    assert [r["created"] for r in body["data"]["assertFacts"]] == [True, True, True]
    user, password = credentials(settings)
    os.makedirs(SHOTS, exist_ok=True)
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = await browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(UI_TIMEOUT_MS)
            bolt = f"bolt://127.0.0.1:{settings.neo4j.bolt_port}"
            await page.goto(f"http://127.0.0.1:{settings.neo4j.http_port}/browser/?dbms={bolt}")
            await page.fill('[data-testid="username"]', user)
            await page.fill('[data-testid="password"]', password)
            await page.click('[data-testid="connect"]')
            await page.get_by_text("You are connected").first.wait_for()

            await _command(page, ":style " + " ".join(style().split()))
            query = (
                f"MATCH p = (:Entity)-[f:FACT]->(:Entity) WHERE f.tenant_id = '{tenant}' RETURN p"
            )
            await _command(page, query)
            graph = page.locator("svg:has(g.node)").first
            await graph.locator("text", has_text="lives in").first.wait_for()
            await page.wait_for_timeout(1500)  # let the force layout settle for the picture
            await page.screenshot(path=str(SHOTS / "neo4j-browser-facts.png"))

            drawn = await graph.evaluate(
                """svg => {
                  const words = el => [...el.querySelectorAll('text')]
                    .map(t => t.textContent.trim()).filter(Boolean).join(' ');
                  return {
                    nodes: Object.fromEntries([...svg.querySelectorAll('g.node')].map(g =>
                      [words(g), [...g.querySelectorAll('circle')].map(c =>
                        getComputedStyle(c).fill).filter(f => f !== 'none').join(',')])),
                    edges: [...svg.querySelectorAll('g.relationship')].map(words),
                  };
                }"""
            )
            fills = drawn["nodes"]
            assert set(fills) == {"Dana", "Lisbon", "Acme Ferries", "Eli", "Porto"}  # names
            assert sorted(drawn["edges"]) == ["lives in", "lives in", "works at"]  # predicates
            # Each type its own colour: the type is a second label, Type_Person, Type_City...
            assert fills["Dana"] == fills["Eli"]
            assert fills["Lisbon"] == fills["Porto"]
            assert len({fills["Dana"], fills["Lisbon"], fills["Acme Ferries"]}) == 3

            guide = live_server_url.replace("127.0.0.1", "localhost") + GUIDE_PATH
            await _command(page, f":play {guide}")
            await page.get_by_text("Palimpsest: inspecting the memory").first.wait_for()
            await page.screenshot(path=str(SHOTS / "neo4j-browser-guide.png"))
            runnable = page.locator("pre.runnable")
            assert await runnable.count() == 2  # the first of five slides: style, then tenant
            assert (await runnable.first.inner_text()).startswith(":style node {")
            assert (await runnable.nth(1).inner_text()).startswith(":param tenant")
        except Exception:
            await page.screenshot(path=str(SHOTS / "neo4j-browser-failure.png"))
            raise
        finally:
            await browser.close()
