"""The recall plan's steps on a recording executor: what ``of`` refuses before any statement,
what it shares with the steps, and which steps run in which transaction."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope
from palimpsest.resolvers.recall import plan as rp
from palimpsest.resolvers.recall.request import Mode
from tests.unit.principals import principal
from tests.unit.recording import services
from tests.unit.resolvers.recall.test_planner import answering, chunk_rows, request


def legs(statement: Statement, params: dict[str, Any]) -> list[Row]:
    return chunk_rows(5, live=5)


@pytest.mark.parametrize(
    ("scopes", "changes", "says"),
    [
        ([], {}, "at least one scope"),
        ([Scope.USER], {"query": "  "}, "query must be"),
        ([Scope.USER], {"query": "x" * (rp.MAX_QUERY_CHARS + 1)}, "query must be"),
        ([Scope.USER], {"top_k": rp.MAX_POOL + 1}, "topK"),
    ],
)
async def test_a_bad_request_is_refused_before_any_statement(
    tmp_path: Path, scopes: list[Scope], changes: dict[str, Any], says: str
) -> None:
    svc, recorder = services(answering(legs), tmp_path)
    with pytest.raises(InvalidArgument, match=says):
        await rp.RecallPlan.of(svc, principal(), scopes, replace(request(), **changes))
    assert recorder.calls == []


async def test_the_plan_holds_what_every_step_shares(tmp_path: Path) -> None:
    svc, _ = services(answering(legs), tmp_path)
    scopes = [Scope.USER, Scope.USER]  # asked twice, read once
    plan = await rp.RecallPlan.of(svc, principal(), scopes, request(7, Mode.HYBRID))
    assert [r.scope for r in plan.refs] == [Scope.USER]
    assert plan.pool == 14  # pool_factor x top_k
    assert plan.terms == ["checkout", "servic"]  # stemmed (fulltext.query_terms)
    assert not plan.stats.done()  # the text side reads them
    vector_only = await rp.RecallPlan.of(svc, principal(), [Scope.USER], request(7, Mode.VECTOR))
    assert vector_only.terms == []


async def test_a_fulltext_request_runs_its_text_side_and_finish_in_one_transaction(
    tmp_path: Path,
) -> None:
    svc, recorder = services(answering(legs), tmp_path)
    plan = await rp.RecallPlan.of(svc, principal(), [Scope.USER], request(5, Mode.FULLTEXT))
    result = await plan.run()
    [tx] = recorder.transactions  # no second session, no embedding
    assert tx[0] == "READ_TEXT_SIDE"
    assert not any(name.startswith("VECTOR_") for name in tx)
    assert plan.stats.done()
    assert result.sources_applied  # the finish ran


async def test_a_hybrid_request_runs_the_vector_side_and_finish_beside_the_text_side(
    tmp_path: Path,
) -> None:
    svc, recorder = services(answering(legs), tmp_path)
    plan = await rp.RecallPlan.of(svc, principal(), [Scope.USER], request(5, Mode.HYBRID))
    result = await plan.run()
    text, vector = sorted(recorder.transactions, key=lambda names: "LOAD_HITS" in names)
    assert text[0] == "READ_TEXT_SIDE"
    assert "LOAD_HITS" not in text
    assert "VECTOR_CHUNKS" in vector
    assert vector[-1] == "LOAD_HITS"  # the finish, in the vector side's transaction
    assert len(result.hits) == 5
