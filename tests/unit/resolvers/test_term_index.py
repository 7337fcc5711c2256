"""Keeping representations and statistics in step: a turn appended to a conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import Stored
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers import term_index
from tests.unit.principals import principal
from tests.unit.recording import services

TURNS = ["Mira: we hiked the ridge", "Tomas: the ridge was windy", "Mira: bring gloves next time"]


def stored(rep: Any) -> dict[str, Any]:
    s = Stored.of(rep)
    return {"ft": s.ft, "ft_tf": s.tf}


async def test_appending_a_turn_reindexes_it_and_the_turn_before(tmp_path: Path) -> None:
    own = [fulltext.bag(t) for t in TURNS]
    # Before: two turns; the second is the last so far (own text three times + previous).
    second_before = own[1] + own[1] + own[1] + own[0]

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "READ_CHUNK_CONTEXT":
            assert params["ids"] == ["t3"]
            return [
                {"id": "t3", "text": TURNS[2], "indexed": False, "speaker": None,
                 "ft": None, "ft_tf": None, "prev": TURNS[1], "next": None, "title": None,
                 "headings": []},
                {"id": "t2", "text": TURNS[1], "indexed": True, "speaker": "tomas",
                 **stored(second_before), "prev": TURNS[0], "next": TURNS[2], "title": None,
                 "headings": []},
            ]  # fmt: skip
        return [{"written": 2, "changed": 1}]

    svc, recorder = services(answer, tmp_path)
    ref = resolve_scope(principal(), Scope.USER)

    async def work(tx: Any) -> int:
        return await term_index.refresh_chunks(tx, svc.settings, ["t3"])

    assert await svc.db.scoped(ref).write_tx(work) == 2
    [write] = [c for c in recorder.calls if c.name == "WRITE_CHUNK_TERMS"]
    props = {r["id"]: r["props"] for r in write.params["rows"]}
    second_after = own[1] + own[1] + own[2] + own[0]
    third = own[2] + own[2] + own[2] + own[1]
    assert fulltext.stored_bag(props["t2"]["ft"], props["t2"]["ft_tf"]) == second_after
    assert fulltext.stored_bag(props["t3"]["ft"], props["t3"]["ft_tf"]) == third
    assert props["t3"]["speaker"] == "mira"
    assert "speaker" not in props["t2"]  # a neighbour keeps its own cues
    [apply] = [c for c in recorder.calls if c.name == "APPLY_TERM_STATS"]
    changes = {(c["kind"], c["term"]): (c["df"], c["len"]) for c in apply.params["changes"]}
    grown = sum(third.values()) + sum(second_after.values()) - sum(second_before.values())
    assert changes[("chunk", "")] == (1, grown)  # one more row, and the lengths' change
    assert changes[("chunk", "glove")] == (2, 0)  # now in the new turn and in the one before
    # Only in the first turn, and no larger a share of the turn before than it was: unchanged.
    assert ("chunk", "hike") not in changes
    [windy] = fulltext.analyze("windy")
    assert changes[("chunk", windy)] == (1, 0)  # the new turn quotes the one before it
    assert changes[("speaker", "mira")] == (1, 0)
    assert apply.params["scope_key"] == ref.scope_key
    assert all(c.write for c in recorder.calls)


async def test_a_change_that_lowers_counts_prunes_those_terms_in_its_transaction(
    tmp_path: Path,
) -> None:
    """Issue 46, finding 6: counts taken to zero were kept, and with them the words."""
    svc, recorder = services(lambda statement, params: [], tmp_path)
    ref = resolve_scope(principal(), Scope.USER)
    old, new = fulltext.bag("ridge gloves"), fulltext.bag("ridge wind")

    async def overwrite(tx: Any) -> None:
        await term_index.apply(tx, svc.settings, "memory", term_index.removed([stored(old)]))
        await term_index.apply(tx, svc.settings, "memory", term_index.added([stored(new)]))

    await svc.db.scoped(ref).write_tx(overwrite)
    assert recorder.transactions == [["APPLY_TERM_STATS", "PRUNE_TERM_STATS", "APPLY_TERM_STATS"]]
    [prune] = [c for c in recorder.calls if c.name == "PRUNE_TERM_STATS"]
    lowered = {(t["kind"], t["term"]) for t in prune.params["pruned"]}
    assert lowered == {("memory", fulltext.TOTALS), *(("memory", t) for t in old)}
