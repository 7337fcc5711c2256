"""The tenant ontology's resolvers (``resolvers.ontology``) on a recording executor: who may
set and read it, and a placed batch's plan, which groups each row under its placed scope."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity import Role, Scope
from palimpsest.resolvers.tenant import ontology
from palimpsest.schema.drafts import EntityRef, FactDraft
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

DOC = """\
status: confirmed

## service
scope: tenant

## person
scope: user
single: lives in
same: lives in = resides in
"""

ADMIN = principal(roles=frozenset({Role.ADMIN}))
BOTH = frozenset({Scope.USER, Scope.TENANT})
WRITER = principal(memory_scopes=BOTH, sql_scopes=BOTH)  # may write both halves of TENANT


def stored(markdown: str | None, status: str = "confirmed") -> Any:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if markdown is None:
            return []
        row = {"markdown": markdown, "status": status, "updated_at": NOW, "agent_name": "x"}
        if statement.name in ("GET_ONTOLOGY", "SET_ONTOLOGY"):
            return [row]
        return []

    return answer


async def test_only_a_tenant_admin_sets_the_ontology_and_a_refusal_writes_nothing(
    tmp_path: Path,
) -> None:
    svc, recorder = services(stored(DOC), tmp_path)
    for who in (principal(), principal(roles=frozenset({Role.OPERATOR}))):
        with pytest.raises(Forbidden, match="needs the admin role"):
            await ontology.set_ontology(svc, who, DOC)
    assert recorder.calls == []
    done = await ontology.set_ontology(svc, ADMIN, DOC)
    [call] = recorder.calls
    assert (call.name, call.write, call.params["status"]) == ("SET_ONTOLOGY", True, "confirmed")
    assert done.single_valued[0].spellings == ("lives in", "resides in")


async def test_a_malformed_ontology_is_refused_before_any_statement(tmp_path: Path) -> None:
    svc, recorder = services(stored(DOC), tmp_path)
    with pytest.raises(InvalidArgument, match="unknown scope 'galaxy'"):
        await ontology.set_ontology(svc, ADMIN, "## service\nscope: galaxy\n")
    assert recorder.calls == []


async def test_reading_the_whole_ontology_needs_the_tenant_scope(tmp_path: Path) -> None:
    svc, recorder = services(stored(DOC), tmp_path)
    with pytest.raises(Forbidden):  # nowhere to write facts: nothing of it
        await ontology.get_ontology(
            svc, principal(user_id=None, memory_scopes=frozenset({Scope.USER}))
        )
    assert recorder.calls == []
    found = await ontology.get_ontology(svc, principal())
    assert found is not None
    assert found.status == "confirmed"
    assert found.markdown == DOC
    assert await ontology.get_ontology(services(stored(None), tmp_path)[0], principal()) is None


async def test_a_writer_refused_tenant_reads_what_closes_its_facts(tmp_path: Path) -> None:
    """Issue 46, finding 4: the single-valued declarations close a USER-only caller's facts,
    so it reads them (and only them); before, it got FORBIDDEN yet its writes told them."""
    svc, _ = services(stored(DOC), tmp_path)
    full = await ontology.get_ontology(svc, principal())
    seen = await ontology.get_ontology(svc, principal(memory_scopes=frozenset({Scope.USER})))
    assert full is not None
    assert seen is not None
    assert (seen.markdown, seen.updated_by, seen.status) == (None, None, "confirmed")
    assert seen.updated_at is None  # when an admin last edited it does not shape its writes
    assert seen.single_valued == full.single_valued
    assert [
        (s.entity_type, s.predicate, s.spellings, s.type_spellings) for s in seen.single_valued
    ] == [("person", "lives in", ("lives in", "resides in"), ("person",))]


async def test_an_ontology_that_closes_nothing_reads_as_none_to_a_writer_refused_tenant(
    tmp_path: Path,
) -> None:
    """A draft, or a confirmed ontology declaring nothing single-valued, shapes none of its
    writes: it reads as no ontology, not revealing that one exists or when it was edited."""
    user_only = principal(memory_scopes=frozenset({Scope.USER}))
    for answer in (stored(DOC, "draft"), stored(DOC.split("single:")[0])):
        svc, _ = services(answer, tmp_path)
        assert await ontology.get_ontology(svc, principal()) is not None
        assert await ontology.get_ontology(svc, user_only) is None


def draft(etype: str, name: str) -> FactDraft:
    return FactDraft(EntityRef(etype, name), "runs on", None, "rails")


async def test_a_placed_plan_groups_each_row_by_its_placed_scope(tmp_path: Path) -> None:
    svc, _ = services(stored(DOC), tmp_path)
    drafts = [draft("service", "ledger"), draft("person", "ada"), draft("service", "api")]
    plan = await ontology.plan_placed(svc, WRITER, Scope.USER, drafts, place=True)
    by_scope = {ref.scope: rows for ref, rows in plan.groups.items()}
    assert by_scope == {Scope.TENANT: [0, 2], Scope.USER: [1]}
    assert [r.index for r in plan.rows] == [0, 1, 2]
    assert all(r.embedding is not None for r in plan.rows)
    kept = await ontology.plan_placed(svc, WRITER, Scope.USER, drafts, place=False)
    assert {ref.scope: rows for ref, rows in kept.groups.items()} == {Scope.USER: [0, 1, 2]}


async def test_a_caller_without_the_tenant_scope_keeps_every_fact_home(tmp_path: Path) -> None:
    svc, _ = services(stored(DOC), tmp_path)
    who = principal(memory_scopes=frozenset({Scope.USER}), sql_scopes=BOTH)
    plan = await ontology.plan_placed(svc, who, Scope.USER, [draft("service", "x")], place=True)
    assert [ref.scope for ref in plan.groups] == [Scope.USER]
