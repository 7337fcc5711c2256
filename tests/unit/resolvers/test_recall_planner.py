"""The recall planner on a recording executor: exact fallback, over-fetch, scope binding."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest import recall as pure
from palimpsest.cypher.executor import Row, Statement
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.resolvers import recall as rr
from palimpsest.resolvers.facts import TimeView
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

DOCS = frozenset({pure.Source.DOCUMENTS})


def chunk_rows(n: int, live: int, prefix: str = "c") -> list[Row]:
    return [
        {
            "score": 1.0 - i / 1000,
            "live": i < live,
            "row": {
                "id": f"{prefix}{i:031d}",
                "document_id": "d" * 32,
                "type": "paragraph",
                "text": f"text {i}",
                "observed_at": None,
                "created_at": NOW,
                "tenant_id": "acme",
                "scope": "USER",
            },
        }
        for i in range(n)
    ]


def request(top_k: int = 10, mode: rr.Mode = rr.Mode.VECTOR) -> rr.RecallRequest:
    return rr.RecallRequest(
        query="where is the checkout service",
        top_k=top_k,
        sources=DOCS,
        view=TimeView(as_of=NOW),
        mode=mode,
    )


async def test_a_short_index_read_falls_back_to_an_exact_scan(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "VECTOR_CHUNKS":
            return chunk_rows(3, live=3, prefix="a")  # fewer than asked: a small scope
        return chunk_rows(5, live=5, prefix="e")

    svc, recorder = services(answer, tmp_path)
    result = await rr.recall(svc, principal(), [Scope.USER], request())
    assert recorder.names() == ["VECTOR_CHUNKS", "EXACT_CHUNKS"]
    assert recorder.calls[0].params["k"] == rr.ANN_FLOOR  # the ANN search is asked for 50
    assert recorder.calls[1].params["k"] == 20  # the exact scan for the pool, 2 x topK
    assert [h.id[0] for h in result.hits] == ["e"] * 5  # the exact answer replaced the short one
    alice = scope_key("acme", Scope.USER, "alice")
    assert {c.params["scope_key"] for c in recorder.calls} == {alice}


async def test_filters_that_thin_a_full_page_make_the_leg_over_fetch(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        k = int(params["k"])
        return chunk_rows(k, live=2 if k == rr.ANN_FLOOR else 20)

    svc, recorder = services(answer, tmp_path)
    result = await rr.recall(svc, principal(), [Scope.USER], request())
    assert recorder.names() == ["VECTOR_CHUNKS", "VECTOR_CHUNKS"]
    assert [c.params["k"] for c in recorder.calls] == [rr.ANN_FLOOR, 80]  # pool 20 x 4
    assert len(result.hits) == 10
    assert all(h.vector_rank is not None for h in result.hits)


async def test_over_fetch_stops_at_the_cap(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        return chunk_rows(int(params["k"]), live=1)  # filters keep almost nothing, always

    svc, recorder = services(answer, tmp_path)
    await rr.recall(svc, principal(), [Scope.USER], request())
    asked = [c.params["k"] for c in recorder.calls]
    assert asked[-1] == rr.MAX_FETCH
    assert asked == sorted(asked)
    assert len(asked) < 6


async def test_each_scope_of_a_merged_read_runs_bound_to_its_own_key(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    await rr.recall(svc, principal(), [Scope.USER, Scope.TENANT], request(mode=rr.Mode.HYBRID))
    keys = {(c.name, c.params["scope_key"]) for c in recorder.calls}
    alice, team = scope_key("acme", Scope.USER, "alice"), scope_key("acme", Scope.TENANT, "acme")
    assert ("FULLTEXT_CHUNKS", alice) in keys
    assert ("FULLTEXT_CHUNKS", team) in keys
    # The full-text leg carries its own scope inside the Lucene query too.
    for call in recorder.calls:
        if call.name == "FULLTEXT_CHUNKS":
            assert f'scope_key:"{call.params["scope_key"]}"' in call.params["lucene"]
