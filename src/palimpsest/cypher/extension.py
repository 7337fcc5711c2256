"""Palimpsest's Neo4j extension as the server sees it (``local/neo4j/extension``): the version
this code expects, the version the connected server has, and which engine answers the
full-text legs, chosen once at start-up (``PALIMPSEST_SEARCH_ENGINE``).

``auto`` uses the procedure (``palimpsest.textLeg``) when the server has the extension of the
version this code expects, else the Cypher statements, with one log line saying why (Aura and
servers run without our plugin have none). ``procedure`` insists: without the right extension
the server does not start. ``cypher`` never asks. Both engines answer the same pools
(docs/decisions/0010-neo4j-extension.md).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from palimpsest.cypher import schema as q
from palimpsest.cypher.driver.executor import Database
from palimpsest.errors import DatabaseFailure, Unavailable

log = logging.getLogger("palimpsest.search_engine")

# The version the procedures must report (``palimpsest.version()``, ``TextLeg.VERSION`` in the
# Java source): a jar of another version is not used.
VERSION = "1"

Engine = Literal["cypher", "procedure"]
Setting = Literal["auto", "procedure", "cypher"]


@dataclass(frozen=True, slots=True)
class SearchEngine:
    """The engine chosen, and why (what ``/readyz`` shows)."""

    name: Engine
    reason: str

    def wire(self) -> dict[str, str]:
        return {"engine": self.name, "reason": self.reason}


CYPHER = SearchEngine("cypher", "default")


async def installed_version(db: Database) -> str | None:
    """The extension's version on the connected server; None when the server has none."""
    if not (await db.read(q.EXTENSION_LISTED))[0]["n"]:
        return None
    rows = await db.read(q.EXTENSION_VERSION)
    return str(rows[0]["version"]) if rows else None


async def choose_everywhere(db: Database, setting: Setting) -> SearchEngine:
    """One engine for every server the handle reaches (each tenant shard asked): the
    procedure only where all have it; ``procedure`` refuses unless all do."""
    chosen = [await choose(server, setting) for server in db.everywhere()]
    return next((e for e in chosen if e.name != "procedure"), chosen[0])


async def choose(db: Database, setting: Setting) -> SearchEngine:
    if setting == "cypher":
        return SearchEngine("cypher", "configured")
    try:
        found = await installed_version(db)
    except DatabaseFailure as failed:
        if setting == "procedure":
            raise
        # A server that will not list its procedures (a managed one's privileges): the Cypher
        # path answers everywhere, so auto falls back to it rather than refusing to start.
        why = f"the server did not list its procedures ({failed.details.get('driverCode')})"
        log.warning("full-text legs run on Cypher: %s", why)
        return SearchEngine("cypher", why)
    if found == VERSION:
        return SearchEngine("procedure", f"extension {found}")
    why = (
        "the server has no Palimpsest extension"
        if found is None
        else f"the server's Palimpsest extension is version {found}, not {VERSION}"
    )
    if setting == "procedure":
        raise Unavailable(
            f"PALIMPSEST_SEARCH_ENGINE=procedure, but {why}: run `palimpsest neo4j install` "
            "and restart Neo4j, or set PALIMPSEST_SEARCH_ENGINE=auto"
        )
    log.warning("full-text legs run on Cypher: %s", why)
    return SearchEngine("cypher", why)
