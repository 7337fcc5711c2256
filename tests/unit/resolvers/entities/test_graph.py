"""``graph`` (``resolvers.graph``) on a recording executor: bounds refused before any read,
aliases cleaned before they are written, and graph recall walking only the new frontier of
each hop under the caller's time view."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import InvalidArgument, NotFound
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.entities import graph
from palimpsest.resolvers.facts.ledger import TimeView
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

A, B, C = "a" * 32, "b" * 32, "c" * 32
CHUNK = "d" * 32
VIEW = TimeView(as_of=NOW - timedelta(days=3))


def entity(id_: str) -> dict[str, Any]:
    return {"id": id_, "type": "person", "name": id_[:1], "normalized_name": id_[:1]}


def fact(subject: str, obj: str) -> Row:
    return {
        "fact": {
            "id": subject[:16] + obj[:16],
            "predicate": "knows",
            "text": f"{subject[:1]} knows {obj[:1]}",
            "natural_key": "k",
            "observed_at": None,
            "valid_at": None,
            "invalid_at": None,
            "created_at": NOW,
            "expired_at": None,
            "supersedes": None,
            "superseded_by": None,
            "confidence": None,
            "verdict": None,
            "judge_reason": None,
            "tenant_id": "acme",
        },
        "subject": entity(subject),
        "object": entity(obj),
        "sources": [{"chunk_id": CHUNK, "start": 0, "end": 3, "text": "abc", "created_at": NOW}],
    }


def chain(statement: Statement, params: dict[str, Any]) -> list[Row]:
    """A knows B knows C: each hop's answer depends on the frontier it is asked about."""
    if statement.name == "ENTITIES_BY_ID":
        return [entity(i) for i in params["ids"]]
    if statement.name == "NEIGHBOUR_FACTS":
        edges = {A: [fact(A, B)], B: [fact(A, B), fact(B, C)], C: [fact(B, C)]}
        return [row for i in params["ids"] for row in edges[i]]
    if statement.name == "CHUNKS_FOR":
        return [
            {
                "id": c,
                "document_id": "e" * 32,
                "type": "paragraph",
                "text": "t",
                "provenance": {"tenant_id": "acme"},
            }
            for c in params["chunk_ids"]
        ]
    return []


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"hops": graph.MAX_HOPS + 1}, "hops"),
        ({"limit": 0}, "limit"),
        ({"seed_ids": [A] * (graph.MAX_SEEDS + 1)}, "seed ids"),
        ({"seed_ids": [], "query": "  "}, "query or seed ids"),
        ({"query": "x" * (graph.MAX_QUERY_CHARS + 1)}, "characters"),
        ({"seed_ids": ["not an id"]}, "seedIds"),
    ],
)
async def test_out_of_bounds_arguments_are_refused_before_any_read(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    svc, recorder = services(chain, tmp_path)
    args: dict[str, Any] = {"query": None, "seed_ids": [A], "hops": 1, "limit": 10, **changes}
    with pytest.raises(InvalidArgument, match=message):
        await graph.recall(svc, principal(), Scope.USER, VIEW, **args)
    assert recorder.calls == []


async def test_each_hop_asks_only_about_the_entities_the_last_one_found(tmp_path: Path) -> None:
    svc, recorder = services(chain, tmp_path)
    found = await graph.recall(svc, principal(), Scope.USER, VIEW, None, [A], 3, 10)
    assert [e.id for e in found.seeds] == [A]
    assert {e.id for e in found.entities} == {A, B, C}
    assert len(found.facts) == 2
    hops = [c.params["ids"] for c in recorder.calls if c.name == "NEIGHBOUR_FACTS"]
    assert hops == [[A], [B], [C]]  # never A again once it was walked
    assert [c.id for c in found.chunks] == [CHUNK]
    key = resolve_scope(principal(), Scope.USER).scope_key
    for call in recorder.calls:
        assert call.params["scope_key"] == key
        if call.name != "CHUNKS_FOR":
            assert call.params["as_of"] == VIEW.as_of


async def test_no_hops_reads_the_seeds_and_their_chunks_only(tmp_path: Path) -> None:
    svc, recorder = services(chain, tmp_path)
    found = await graph.recall(svc, principal(), Scope.USER, VIEW, None, [A], 0, 10)
    assert found.facts == []
    assert recorder.names() == ["ENTITIES_BY_ID", "CHUNKS_FOR"]


async def test_the_walk_stops_at_the_limit(tmp_path: Path) -> None:
    svc, recorder = services(chain, tmp_path)
    found = await graph.recall(svc, principal(), Scope.USER, VIEW, None, [A], 3, 1)
    assert len(found.facts) == 1
    assert recorder.names().count("NEIGHBOUR_FACTS") == 1


async def test_aliases_are_trimmed_deduplicated_and_folded_before_the_write(
    tmp_path: Path,
) -> None:
    svc, recorder = services(lambda s, p: [entity(A)], tmp_path)
    await graph.set_aliases(svc, principal(), Scope.USER, A, ["  Ada   L. ", "Ada L.", "ADA L."])
    (call,) = recorder.calls
    assert call.write
    assert call.params["aliases"] == ["Ada L.", "ADA L."]
    assert len(call.params["norms"]) == len(set(call.params["norms"]))


@pytest.mark.parametrize(
    "aliases", [["ok", "  "], ["x" * 1000], [f"a{i}" for i in range(graph.MAX_ALIASES + 1)]]
)
async def test_bad_aliases_write_nothing(tmp_path: Path, aliases: list[str]) -> None:
    svc, recorder = services(lambda s, p: [entity(A)], tmp_path)
    with pytest.raises(InvalidArgument):
        await graph.set_aliases(svc, principal(), Scope.USER, A, aliases)
    assert recorder.calls == []


async def test_aliases_of_an_entity_the_scope_lacks_answer_not_found(tmp_path: Path) -> None:
    svc, _ = services(lambda s, p: [], tmp_path)
    with pytest.raises(NotFound):
        await graph.set_aliases(svc, principal(), Scope.USER, A, ["Ada"])
