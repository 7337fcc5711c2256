"""The latency bench's raw work (``recall_latency.raw_search``): the product's recall plan up
to its legs, on a recording executor: the same legs, nothing fused or loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope, resolve_scope
from palimpsest_bench import recall_latency
from tests.unit.principals import principal
from tests.unit.recording import services
from tests.unit.resolvers.recall.test_planner import answering, chunk_rows


async def test_the_raw_work_runs_the_legs_and_neither_fuses_nor_loads(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        return chunk_rows(5, live=5)

    svc, recorder = services(answering(answer), tmp_path)
    ref = resolve_scope(principal(), Scope.USER)
    docs = frozenset({pure.Source.DOCUMENTS})
    rows = await recall_latency.raw_search(svc, ref, "where is the ferry", docs)
    names = [c.name for c in recorder.calls]
    assert "LOAD_HITS" not in names
    legs = [c for c in recorder.calls if c.name.endswith("_CHUNKS")]
    assert {c.name for c in legs} >= {"VECTOR_CHUNKS"}, names
    assert rows >= 5
