"""Choosing the full-text legs' engine at start-up from what the server lists."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, cast

import pytest

from palimpsest.cypher import extension
from palimpsest.cypher import schema as q
from palimpsest.cypher.driver.executor import Database, Row, Statement
from palimpsest.errors import DatabaseFailure, Unavailable


class Server:
    """What a Neo4j answers to the two start-up reads; counts what it was asked."""

    def __init__(self, version: str | None) -> None:
        self.version = version
        self.asked: list[str] = []

    async def read(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        self.asked.append(statement.name)
        if statement is q.EXTENSION_LISTED:
            return [{"n": int(self.version is not None)}]
        assert statement is q.EXTENSION_VERSION
        assert self.version is not None, "an absent procedure is never called"
        return [{"version": self.version}]


def _db(server: Server) -> Database:
    return cast(Database, server)


async def test_auto_uses_the_procedure_of_the_expected_version() -> None:
    chosen = await extension.choose(_db(Server(extension.VERSION)), "auto")
    assert chosen == extension.SearchEngine("procedure", f"extension {extension.VERSION}")
    assert chosen.wire() == {"engine": "procedure", "reason": f"extension {extension.VERSION}"}


async def test_auto_without_the_extension_runs_cypher_and_says_why_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server = Server(None)
    with caplog.at_level(logging.WARNING, "palimpsest.search_engine"):
        chosen = await extension.choose(_db(server), "auto")
    assert chosen.name == "cypher"
    assert server.asked == ["EXTENSION_LISTED"]
    [line] = caplog.messages
    assert "no Palimpsest extension" in line


async def test_auto_with_a_jar_of_another_version_runs_cypher_and_names_both(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, "palimpsest.search_engine"):
        chosen = await extension.choose(_db(Server("0-other")), "auto")
    assert chosen.name == "cypher"
    assert (
        chosen.reason
        == f"the server's Palimpsest extension is version 0-other, not {extension.VERSION}"
    )
    assert caplog.messages == [f"full-text legs run on Cypher: {chosen.reason}"]


async def test_procedure_refuses_to_start_without_the_right_extension() -> None:
    with pytest.raises(Unavailable, match="PALIMPSEST_SEARCH_ENGINE=procedure"):
        await extension.choose(_db(Server("0-other")), "procedure")
    chosen = await extension.choose(_db(Server(extension.VERSION)), "procedure")
    assert chosen.name == "procedure"


async def test_cypher_never_asks_the_server() -> None:
    server = Server(extension.VERSION)
    assert await extension.choose(_db(server), "cypher") == extension.SearchEngine(
        "cypher", "configured"
    )
    assert server.asked == []


class Refusing(Server):
    """A server whose user may not list procedures (a managed service's privileges)."""

    async def read(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        self.asked.append(statement.name)
        raise DatabaseFailure("the database failed the operation", driverCode="Forbidden")


async def test_auto_runs_cypher_where_the_server_will_not_list_procedures(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, "palimpsest.search_engine"):
        chosen = await extension.choose(_db(Refusing(None)), "auto")
    assert chosen == extension.SearchEngine(
        "cypher", "the server did not list its procedures (Forbidden)"
    )
    [line] = caplog.messages
    assert "did not list" in line
    with pytest.raises(DatabaseFailure):
        await extension.choose(_db(Refusing(None)), "procedure")


class Servers:
    """A handle over several servers (tenant shards): ``everywhere`` gives one per server."""

    def __init__(self, *servers: Server) -> None:
        self.servers = servers

    def everywhere(self) -> list[Database]:
        return [_db(s) for s in self.servers]


async def test_the_procedure_is_used_only_where_every_shard_has_it() -> None:
    both = Servers(Server(extension.VERSION), Server(extension.VERSION))
    assert (await extension.choose_everywhere(cast(Database, both), "auto")).name == "procedure"
    one = Servers(Server(extension.VERSION), Server(None))
    chosen = await extension.choose_everywhere(cast(Database, one), "auto")
    assert chosen.name == "cypher"
    assert "no Palimpsest extension" in chosen.reason
    with pytest.raises(Unavailable, match="PALIMPSEST_SEARCH_ENGINE=procedure"):
        await extension.choose_everywhere(cast(Database, one), "procedure")
