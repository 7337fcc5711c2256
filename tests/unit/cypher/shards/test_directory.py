"""The directory: a tenant's shard recorded at its first write, read once per process, and
a shard no one configured refused."""

from __future__ import annotations

from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Database, Row, Statement
from palimpsest.cypher.shards import Directory, place
from palimpsest.cypher.shards import directory as q
from palimpsest.errors import Unavailable
from tests.unit.recording import RecordingExecutor

SHARDS = ("a", "b")


class Table:
    """The directory's rows, answered as the server would."""

    def __init__(self, **rows: str) -> None:
        self.rows = dict(rows)

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement is q.LOOKUP_TENANT_SHARD:
            found = self.rows.get(params["tenant"])
            return [] if found is None else [{"shard": found}]
        if statement is q.ASSIGN_TENANT_SHARD:
            shard = self.rows.setdefault(params["tenant"], params["shard"])
            return [{"shard": shard}]
        if statement is q.DIRECTORY_SHARDS:
            return [{"shard": s} for s in sorted(set(self.rows.values()))]
        return []


def directory(table: Table) -> tuple[Directory, RecordingExecutor]:
    recorder = RecordingExecutor(table)
    return Directory(Database(recorder), SHARDS), recorder


async def test_a_first_write_records_the_placed_shard_and_later_calls_read_the_cache() -> None:
    table = Table()
    found, recorder = directory(table)
    shard = await found.shard_of("acme", assign=True)
    assert shard == place("acme", SHARDS)
    assert table.rows == {"acme": shard}
    assert recorder.names() == ["LOOKUP_TENANT_SHARD", "ASSIGN_TENANT_SHARD"]
    assert await found.shard_of("acme", assign=False) == shard
    assert found.cached("acme") == shard
    assert len(recorder.calls) == 2, "the second answer came from the cache"


async def test_a_recorded_entry_wins_over_the_policy() -> None:
    other = "b" if place("acme", SHARDS) == "a" else "a"
    found, recorder = directory(Table(acme=other))
    assert await found.shard_of("acme", assign=True) == other
    assert recorder.names() == ["LOOKUP_TENANT_SHARD"]


async def test_a_read_of_a_tenant_that_never_wrote_records_nothing() -> None:
    table = Table()
    found, recorder = directory(table)
    assert await found.shard_of("new", assign=False) == place("new", SHARDS)
    assert table.rows == {}
    assert found.cached("new") is None, "its first write must still record it"
    assert recorder.names() == ["LOOKUP_TENANT_SHARD"]


async def test_start_up_refuses_an_entry_naming_an_unconfigured_shard_in_one_line() -> None:
    found, recorder = directory(Table(acme="a", globex="gone"))
    with pytest.raises(Unavailable) as refused:
        await found.prepare()
    message = refused.value.message
    assert "gone" in message
    assert "\n" not in message
    assert "globex" not in message, "names no tenant"
    assert "acme" not in message, "names no tenant"
    assert recorder.names() == ["CONSTRAINT_TENANT_SHARD", "DIRECTORY_SHARDS"]
    await Directory(Database(RecordingExecutor(Table(acme="a"))), SHARDS).prepare()


async def test_an_entry_written_since_with_another_list_refuses_that_tenant_only() -> None:
    found, _ = directory(Table(acme="gone", globex="b"))
    with pytest.raises(Unavailable) as refused:
        await found.shard_of("acme", assign=False)
    assert "acme" not in refused.value.message
    assert await found.shard_of("globex", assign=False) == "b"
