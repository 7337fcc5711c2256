"""The harvest bridge (``resolvers.cycle.harvesting``) on a recording executor: what a batch
banks (keys, the run's grants, facts stored with the span), the receipt, and the refusals
that bank nothing."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.cycle import harvesting
from palimpsest.resolvers.cycle.harvesting import MAX_LABEL, MAX_SPANS, SpanDraft, span_id
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef
from tests.unit.principals import principal
from tests.unit.recording import NOW, RecordingExecutor, services

# Already banked: the first span a run sends with sourceId "m1".
BANKED = span_id(resolve_scope(principal(), Scope.USER), principal(), "m1")


def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
    if statement.name == "HARVEST_SPANS":
        # Answered out of order, as the statement's UNWIND may.
        rows = [
            {"index": s["index"], "id": s["id"], "created": s["id"] != BANKED}
            for s in params["spans"]
        ]
        return list(reversed(rows))
    if statement.name == "RAISE_QUOTA_COUNTERS":
        return [{"fits": True}]
    return []


def banking(tmp_path: Path) -> tuple[Any, RecordingExecutor]:
    return services(answer, tmp_path)


def fact(**changes: Any) -> FactDraft:
    return FactDraft(
        EntityRef("person", "Ada"), "works at", EntityRef("company", "Initech"), None, **changes
    )


async def test_a_batch_is_banked_in_order_counting_duplicates(tmp_path: Path) -> None:
    svc, recorder = banking(tmp_path)
    spans = [
        SpanDraft("Hello.", source_id="m1"),
        SpanDraft("Ada joined Initech.", speaker="Ada", source_id="m2"),
        SpanDraft("No id."),
    ]
    got = await harvesting.harvest(svc, principal(), spans, 3)
    assert (got.accepted, got.duplicates, got.compaction_generation) == (2, 1, 3)
    [call] = [c.params for c in recorder.calls if c.name == "HARVEST_SPANS"]
    assert got.span_ids == [s["id"] for s in call["spans"]]  # in the order sent
    assert got.span_ids[0] == BANKED
    assert call["origin"] == "compaction"
    assert (call["grant_memory"], call["grant_sql"], call["isolated"]) == (None, None, False)
    assert call["now"] == NOW
    assert call["spans"][1]["bytes"] == len("Ada joined Initech.") + len("Ada") + len("m2")


def test_a_span_is_keyed_by_its_run_else_its_session() -> None:
    ref = resolve_scope(principal(), Scope.USER)
    by_run = span_id(ref, principal(), "m1")
    assert by_run == span_id(ref, principal(session_id="other"), "m1")
    assert by_run != span_id(ref, principal(run_id="r2"), "m1")
    by_session = span_id(ref, principal(run_id=None), "m1")
    assert by_session not in (None, by_run)
    assert by_session != span_id(ref, principal(run_id=None, session_id="s2"), "m1")
    assert span_id(ref, principal(run_id=None, session_id=None), "m1") is None


async def test_a_spans_facts_are_stored_with_it_said_when_the_span_was(tmp_path: Path) -> None:
    svc, recorder = banking(tmp_path)
    said = NOW - timedelta(days=1)
    span = SpanDraft(
        "Ada works at Initech.", observed_at=said, facts=(fact(quote="works at Initech"),)
    )
    await harvesting.harvest(svc, principal(), [span], 0)
    [call] = [c.params for c in recorder.calls if c.name == "HARVEST_SPANS"]
    [stored] = json.loads(call["spans"][0]["facts"])
    assert stored["subject"] == ["person", "Ada"]
    assert stored["object"] == ["company", "Initech"]
    assert stored["observed_at"] == said.isoformat()
    assert stored["quote"] == "works at Initech"
    back = harvesting.fact_draft(stored, SourceRef("c" * 32, 0, 5))
    assert (back.subject, back.object, back.observed_at, back.quote) == (
        EntityRef("person", "Ada"),
        EntityRef("company", "Initech"),
        said,
        "works at Initech",
    )


@pytest.mark.parametrize(
    ("spans", "generation", "message"),
    [
        ([], 0, "spans must not be empty"),
        ([SpanDraft("x")] * (MAX_SPANS + 1), 0, f"over the {MAX_SPANS} limit"),
        ([SpanDraft("x")], -1, "compactionGeneration must be zero or more"),
        ([SpanDraft("  ")], 0, "spans[0].text must not be blank"),
        ([SpanDraft("x", speaker="")], 0, f"spans[0].speaker must be 1-{MAX_LABEL} characters"),
        ([SpanDraft("x", role="r" * (MAX_LABEL + 1))], 0, "spans[0].role must be 1-"),
        ([SpanDraft("x" * (1024 * 1024 + 1))], 0, "the limit per call is 1048576"),
        (
            [SpanDraft("Ada", facts=(fact(source=SourceRef("c" * 32, 0, 1)),))],
            0,
            "spans[0].facts[0].source: a span's facts are quoted from the span itself",
        ),
        (
            [SpanDraft("Ada", facts=(fact(quote="Bob"),))],
            0,
            "spans[0].facts[0].quote must be a part of the span's text",
        ),
        (
            [SpanDraft("Ada", facts=(FactDraft(EntityRef("person", "Ada"), "  ", None, None),))],
            0,
            "spans[0].",
        ),
    ],
)
async def test_a_bad_batch_banks_nothing(
    tmp_path: Path, spans: list[SpanDraft], generation: int, message: str
) -> None:
    svc, recorder = banking(tmp_path)
    with pytest.raises(InvalidArgument) as caught:
        await harvesting.harvest(svc, principal(), spans, generation)
    assert message in caught.value.message
    assert recorder.calls == []


async def test_a_source_id_needs_a_run_or_a_session(tmp_path: Path) -> None:
    svc, recorder = banking(tmp_path)
    who = principal(run_id=None, session_id=None)
    with pytest.raises(InvalidArgument, match=r"spans\[0\]\.sourceId needs a run or session claim"):
        await harvesting.harvest(svc, who, [SpanDraft("x", source_id="m1")], 0)
    got = await harvesting.harvest(svc, who, [SpanDraft("x")], 0)  # no sourceId: a fresh id
    assert got.accepted == 1
    assert len([c for c in recorder.calls if c.name == "HARVEST_SPANS"]) == 1


async def test_a_token_without_the_user_grant_is_forbidden(tmp_path: Path) -> None:
    svc, recorder = banking(tmp_path)
    with pytest.raises(Forbidden):
        await harvesting.harvest(
            svc, principal(memory_scopes=frozenset({Scope.AGENT})), [SpanDraft("x")], 0
        )
    assert recorder.calls == []


async def test_the_runs_grants_are_banked_with_the_span(tmp_path: Path) -> None:
    svc, recorder = banking(tmp_path)
    who = principal(
        memory_scopes=frozenset({Scope.USER, Scope.TENANT}), sql_scopes=frozenset({Scope.USER})
    )
    await harvesting.harvest(svc, who, [SpanDraft("x")], 0)
    [call] = [c.params for c in recorder.calls if c.name == "HARVEST_SPANS"]
    assert (call["grant_memory"], call["grant_sql"]) == (["TENANT", "USER"], ["USER"])
