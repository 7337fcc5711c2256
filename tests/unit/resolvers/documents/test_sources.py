"""``sources`` (``resolvers.sources``) on a recording executor: sources withdrawn in batches
until one comes back short, only facts left unsourced dropped, their orphaned entities and
their terms forgotten, and the holder scopes the caller's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.ranking.fulltext import TOTALS
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.documents import sources
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal
from tests.unit.recording import services

ORIGIN = "9" * 32
ENTITY = "e" * 32


class Scripted:
    """``REMOVE_SOURCES`` answers ``batches`` in turn; every fact it touches is left unsourced
    when ``orphaned``."""

    def __init__(self, batches: list[int], orphaned: bool = True) -> None:
        self.batches = batches
        self.orphaned = orphaned

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "REMOVE_SOURCES":
            n = self.batches.pop(0)
            return [{"sources": n, "fact_ids": [f"{i:032x}" for i in range(n)]}]
        if statement.name == "DROP_UNSOURCED_FACTS":
            gone = len(params["fact_ids"]) if self.orphaned else 0
            indexed = [{"ft": "ada lovelace", "ft_tf": [1, 1], "speaker": None}] * gone
            return [{"facts": gone, "entity_ids": [ENTITY] if gone else [], "indexed": indexed}]
        if statement.name == "DROP_ORPHAN_ENTITIES":
            return [{"entities": len(params["ids"])}]
        return []


async def withdraw(svc: Services, batch: int) -> sources.Withdrawn:
    ref = resolve_scope(principal(), Scope.USER)
    return await svc.db.scoped(ref).write_tx(
        lambda tx: sources.withdraw_all(tx, svc.settings, ORIGIN, None, batch)
    )


async def test_batches_run_until_one_comes_back_short(tmp_path: Path) -> None:
    svc, recorder = services(Scripted([2, 2, 1]), tmp_path)
    total = await withdraw(svc, batch=2)
    assert total == sources.Withdrawn(sources=5, facts=5, entities=3)
    assert recorder.names().count("REMOVE_SOURCES") == 3
    assert len(recorder.transactions) == 1  # all of it in one transaction


async def test_nothing_left_to_withdraw_touches_no_fact(tmp_path: Path) -> None:
    svc, recorder = services(Scripted([0]), tmp_path)
    assert await withdraw(svc, batch=2) == sources.Withdrawn()
    assert recorder.names() == ["REMOVE_SOURCES"]


async def test_dropped_facts_take_their_terms_out_of_the_scopes_statistics(
    tmp_path: Path,
) -> None:
    svc, recorder = services(Scripted([1]), tmp_path)
    await withdraw(svc, batch=2)
    names = recorder.names()
    assert names.index("DROP_UNSOURCED_FACTS") < names.index("PRUNE_TERM_STATS")
    (prune,) = [c for c in recorder.calls if c.name == "PRUNE_TERM_STATS"]
    # Its words, and the kind's totals row (row count and length), which is never pruned away.
    assert sorted(t["term"] for t in prune.params["pruned"]) == [TOTALS, "ada", "lovelace"]
    assert {t["kind"] for t in prune.params["pruned"]} == {"fact"}


async def test_facts_still_sourced_leave_entities_and_terms_alone(tmp_path: Path) -> None:
    svc, recorder = services(Scripted([1], orphaned=False), tmp_path)
    assert await withdraw(svc, batch=2) == sources.Withdrawn(sources=1)
    assert "DROP_ORPHAN_ENTITIES" not in recorder.names()
    assert "PRUNE_TERM_STATS" not in recorder.names()


def test_holder_scopes_are_the_callers_own_with_home_first_and_once() -> None:
    who = principal(memory_scopes=frozenset({Scope.AGENT, Scope.USER}))
    home = resolve_scope(who, Scope.USER)
    held = sources.holder_scopes(who, home)
    assert held[0] == home
    assert [r.scope for r in held] == [Scope.USER, Scope.AGENT]  # no TENANT: not granted
    assert len({r.scope_key for r in held}) == len(held)
