"""The fact write path (``resolvers.facts``) on a recording executor: what ``assertFacts`` asks
the database to store, and the refusals of ``judge`` and ``supersede``, which write nothing."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Conflict, Forbidden, InvalidArgument, NotFound
from palimpsest.identity import Origin, Role, Scope
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.facts.inputs import MAX_BATCH
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef
from palimpsest.schema.fact_rows import FactRow
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

CHUNK = "c" * 32
TEXT = "Ada works at Initech since 2020."


class Stop(Exception):
    """Raised where the write statement would run: the test reads what it was given."""


def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
    if statement.name == "ASSERT_FACTS":
        raise Stop
    if statement.name == "CHUNK_TEXTS":
        return [{"id": CHUNK, "text": TEXT, "document_id": "d" * 32}]
    if statement.name == "LOCK_RESOLVE_ENTITIES":  # the lock's time; no stored entity
        return [{"i": None, "stored_keys": None, "now": NOW}]
    return []  # no ontology, no stored entity, no near-duplicate, no key conflict


def draft(obj: str, **changes: Any) -> FactDraft:
    return FactDraft(
        EntityRef("person", "Ada"), "works at", EntityRef("company", obj), None, **changes
    )


async def written(tmp_path: Path, *drafts: FactDraft) -> list[dict[str, Any]]:
    """The ``$facts`` the batch's ``ASSERT_FACTS`` would store."""
    svc, recorder = services(answer, tmp_path)
    with pytest.raises(Stop):
        await facts.assert_facts(svc, principal(), Scope.USER, drafts)
    [call] = [c for c in recorder.calls if c.name == "ASSERT_FACTS"]
    assert call.params["scope_key"]  # the handle filtered it by the caller's scope
    items: list[dict[str, Any]] = call.params["facts"]
    return items


async def test_every_field_of_the_row_reaches_the_statement_once_encoded(
    tmp_path: Path,
) -> None:
    [item] = await written(tmp_path, draft("Initech"))
    assert set(item) >= set(FactRow.__dataclass_fields__)
    assert item["subject_norm"] == "ada"
    assert item["object_norm"] == "initech"
    assert item["embedding"] == [1.0, 0.0, 0.0, 0.0]
    assert type(item["embedding"]) is list
    assert item["ft_len"]
    assert item["ft"]
    assert item["mention_chunk_id"] is None
    assert item["source_key"] is None
    assert item["merged"] is False


async def test_a_source_is_quoted_narrowed_and_keyed_from_the_callers_scope(
    tmp_path: Path,
) -> None:
    source = SourceRef(CHUNK, 0, len(TEXT))
    [item] = await written(tmp_path, draft("Initech", source=source, quote="works at Initech"))
    assert (item["source_start"], item["source_end"]) == (4, 20)
    assert item["source_text"] == "works at Initech"
    assert item["source_key"] == f"{item['origin_key']}:{CHUNK}:4:20"
    assert item["mention_chunk_id"] == CHUNK
    assert item["origin_scope"] == "USER"


async def test_a_source_past_the_chunk_is_refused(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    late = draft("Initech", source=SourceRef(CHUNK, 0, len(TEXT) + 1))
    with pytest.raises(InvalidArgument, match=r"facts\[0\]\.source: end 33 is past"):
        await facts.assert_facts(svc, principal(), Scope.USER, [late])
    assert "ASSERT_FACTS" not in recorder.names()


async def test_a_near_duplicate_in_the_batch_is_written_as_the_earlier_fact(
    tmp_path: Path,
) -> None:
    # One constant embedding: the second fact is as close as can be to the first.
    first, second = await written(tmp_path, draft("Initech"), draft("Initech Corp"))
    assert second["merged"] is True
    assert first["merged"] is False
    assert second["natural_key"] == first["natural_key"]
    assert second["object_name"] == "Initech"


async def test_a_fact_given_its_own_key_is_never_merged(tmp_path: Path) -> None:
    _first, second = await written(tmp_path, draft("Initech"), draft("Acme", natural_key="k:2"))
    assert second["merged"] is False
    assert second["natural_key"] == "k:2"


async def test_a_key_naming_another_fact_conflicts_and_writes_nothing(tmp_path: Path) -> None:
    def clash(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "KEY_CONFLICTS":
            return [{"natural_key": "k:1"}]
        return answer(statement, params)

    svc, recorder = services(clash, tmp_path)
    with pytest.raises(Conflict, match="k:1"):
        await facts.assert_facts(svc, principal(), Scope.USER, [draft("X", natural_key="k:1")])
    assert "ASSERT_FACTS" not in recorder.names()


async def test_an_empty_or_oversized_batch_is_refused_before_any_statement(
    tmp_path: Path,
) -> None:
    svc, recorder = services(answer, tmp_path)
    for batch in ([], [draft("X")] * (MAX_BATCH + 1)):
        with pytest.raises(InvalidArgument):
            await facts.assert_facts(svc, principal(), Scope.USER, batch)
    assert recorder.calls == []


def stored_fact(quote: str | None) -> Any:
    """An answer holding one fact (with or without a source quote), for ``judge``."""

    def run(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "GET_FACT":
            return [fact_row(quote)]
        if statement.name == "JUDGE":
            return [{"id": params["id"]}]
        return []

    return run


FACT_ID = "f" * 32


def fact_row(quote: str | None) -> Row:
    entity = {"type": "person", "name": "Ada", "tenant_id": "acme"}
    sources = [] if quote is None else [source_row(quote)]
    return {
        "fact": {
            "id": FACT_ID,
            "predicate": "works at",
            "text": "Ada works at X",
            "natural_key": "k",
            "observed_at": None,
            "valid_at": None,
            "invalid_at": None,
            "created_at": NOW - timedelta(days=1),
            "expired_at": None,
            "supersedes": None,
            "superseded_by": None,
            "confidence": None,
            "verdict": None,
            "judge_reason": None,
            "tenant_id": "acme",
        },
        "subject": {**entity, "id": "s" * 32},
        "object": {**entity, "id": "o" * 32, "name": "X"},
        "sources": sources,
    }


def source_row(quote: str) -> dict[str, Any]:
    return {"chunk_id": CHUNK, "start": 0, "end": len(quote), "text": quote, "created_at": NOW}


@pytest.mark.parametrize(
    ("verdict", "reason", "message"),
    [("true", "it is", "verdict must be one of"), ("supported", " ", "reason is required")],
)
async def test_a_bad_verdict_or_reason_is_refused_before_any_statement(
    tmp_path: Path, verdict: str, reason: str, message: str
) -> None:
    svc, recorder = services(stored_fact("Ada works at X"), tmp_path)
    with pytest.raises(InvalidArgument, match=message):
        await facts.judge(svc, principal(), Scope.USER, FACT_ID, verdict, reason)
    assert recorder.calls == []


async def test_a_fact_without_a_source_is_judged_by_an_operator_only(tmp_path: Path) -> None:
    svc, recorder = services(stored_fact(None), tmp_path)
    with pytest.raises(Forbidden, match="only an operator may judge it"):
        await facts.judge(svc, principal(), Scope.USER, FACT_ID, "supported", "I know")
    assert "JUDGE" not in recorder.names()
    admin_agent = principal(roles=frozenset({Role.ADMIN}))  # an agent, even an admin's
    with pytest.raises(Forbidden):
        await facts.judge(svc, admin_agent, Scope.USER, FACT_ID, "supported", "I know")
    operator = principal(agent_name=None, roles=frozenset({Role.ADMIN}))
    assert operator.origin is Origin.OPERATOR
    with pytest.raises(InvalidArgument, match="cannot be judged mistyped"):
        await facts.judge(svc, operator, Scope.USER, FACT_ID, "mistyped", "I know")
    assert "JUDGE" not in recorder.names()
    await facts.judge(svc, operator, Scope.USER, FACT_ID, "supported", "I know")
    [judged] = [c for c in recorder.calls if c.name == "JUDGE"]
    assert (judged.params["confidence"], judged.params["judged_by"]) == (0.9, "operator")


async def test_a_sourced_fact_is_judged_by_its_reader_with_the_verdicts_confidence(
    tmp_path: Path,
) -> None:
    svc, recorder = services(stored_fact("Ada works at X"), tmp_path)
    await facts.judge(svc, principal(), Scope.USER, FACT_ID, "unsupported", "not in the text")
    [judged] = [c for c in recorder.calls if c.name == "JUDGE"]
    assert judged.params["confidence"] == 0.0
    assert judged.params["verdict"] == "unsupported"


async def test_judging_a_missing_fact_is_not_found(tmp_path: Path) -> None:
    svc, recorder = services(lambda statement, params: [], tmp_path)
    with pytest.raises(NotFound):
        await facts.judge(svc, principal(), Scope.USER, FACT_ID, "supported", "yes")
    assert "JUDGE" not in recorder.names()


async def test_a_fact_cannot_supersede_itself(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    with pytest.raises(InvalidArgument, match="cannot supersede itself"):
        await facts.supersede(svc, principal(), Scope.USER, FACT_ID, FACT_ID)
    assert recorder.calls == []
