"""Fact pairs recorded in the write's transaction (``resolvers.facts.conflicts.record``) on a
recording executor: a stored fact pairs by its id, an earlier row of the same batch by the id
its write gave it, a fact never pairs with itself and one pair is recorded once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.facts import conflicts
from palimpsest.resolvers.facts.dedup import Close
from tests.unit.principals import principal
from tests.unit.recording import NOW, services


def recorded(statement: Statement, params: dict[str, Any]) -> list[Row]:
    assert statement.name == "RECORD_FACT_PAIRS", statement.name
    return [{"recorded": len(params["pairs"])}]


async def test_pairs_name_stored_facts_and_the_batch_own_rows_by_their_written_ids(
    tmp_path: Path,
) -> None:
    svc, recorder = services(recorded, tmp_path)
    ref = resolve_scope(principal(), Scope.USER)
    band = [
        Close(1, "stored-1", 0.9),  # row 1 and a stored fact
        Close(2, "", 0.8, other=1),  # row 2 and row 1, both new in this batch
        Close(3, "", 0.7, other=0),  # row 3 merged into row 0's fact: the same id, no pair
        Close(2, "", 0.8, other=4),  # row 4 merged into row 1's fact: the same pair as above
    ]
    written = {0: "f-0", 1: "f-1", 2: "f-2", 3: "f-0", 4: "f-1"}
    await svc.db.scoped(ref).write_tx(lambda tx: conflicts.record(tx, band, written, NOW))
    [call] = recorder.calls
    pairs = [(p["older_id"], p["newer_id"], p["id"]) for p in call.params["pairs"]]
    assert pairs == [
        ("stored-1", "f-1", conflicts.pair_id("stored-1", "f-1")),
        ("f-1", "f-2", conflicts.pair_id("f-1", "f-2")),
    ]
