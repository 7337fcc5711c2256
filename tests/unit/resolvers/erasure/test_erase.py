"""Erasure (``resolvers.erasure.erase``) on a recording executor that keeps a small graph:
every label of the person's scope is drained in counted batches of ``erasure_batch``, the
receipt adds up what each batch removed, and the refusals write nothing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Conflict, Forbidden, InvalidArgument, NotFound
from palimpsest.identity import Role, Scope
from palimpsest.resolvers.erasure import erase, jobs
from palimpsest.resolvers.erasure.jobs import DONE, RUNNING, ErasureKind
from palimpsest.schema.drafts import EntityRef
from tests.unit.principals import principal
from tests.unit.recording import NOW, RecordingExecutor, services

COUNTERS = [f.name for f in jobs._FIELDS]
LABEL_STATEMENTS = {s.name: (label, counter) for label, s, counter in erase.PERSON_LABELS}
ADMIN = principal(roles=frozenset({Role.ADMIN}), memory_scopes=None)


class Graph:
    """What the erasure statements see: rows left per statement, and the job records."""

    def __init__(self, left: dict[str, int] | None = None, *, keeps_arriving: bool = False) -> None:
        self.left = dict(left or {})
        self.jobs: dict[str, dict[str, Any]] = {}
        self.keeps_arriving = keeps_arriving
        self.subject: str | None = None
        self.subject_facts = 0

    def row(self, job: dict[str, Any]) -> list[Row]:
        return [{"job": dict(job), "authored": {}}]

    def take(self, name: str, batch: int) -> int:
        n = min(self.left.get(name, 0), batch)
        self.left[name] = self.left.get(name, 0) - n
        return n

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        name = statement.name
        if name == "OPEN_JOB":
            job = next(
                (j for j in self.jobs.values() if j["active_key"] == params["active_key"]), None
            )
            if job is None:
                job = {
                    **dict.fromkeys(COUNTERS, 0),
                    "id": params["id"],
                    "active_key": params["active_key"],
                    "kind": params["kind"],
                    "target_scope": params["target_scope"],
                    "user_id": params["user_id"],
                    "requested_by": params["requested_by"],
                    "requested_at": params["now"],
                    "finished_at": None,
                    "status": RUNNING,
                    "attempts": 0,
                    "sql_erasing": None,
                    "matched": False,
                }
                self.jobs[job["id"]] = job
            job["attempts"] += 1
            return self.row(job)
        if name in ("LOCK_JOB", "GET_JOB"):
            return self.row(self.jobs[params["id"]]) if params["id"] in self.jobs else []
        if name == "FIND_RUNNING_JOB":
            found = [j for j in self.jobs.values() if j.get("active_key") == params["active_key"]]
            return self.row(found[0]) if found else []
        if name == "ADD_COUNTS":
            job = self.jobs[params["id"]]
            for counter, n in params["add"].items():
                job[counter] += n
            job["matched"] = job["matched"] or params["touched"] > 0
            if params["sql_erasing"] is not None:
                job["sql_erasing"] = params["sql_erasing"]
            return []
        if name == "FINISH_JOB":
            job = self.jobs[params["id"]]
            job.update(status=DONE, finished_at=NOW, active_key=None, user_id=None)
            return self.row(job)
        if name in LABEL_STATEMENTS or name.startswith("SCRUB_"):
            n = self.take(name, params["batch"])
            return [{"rows": n, "counted": n}]
        if name == "REMOVE_SOURCES":
            return [{"sources": 0, "fact_ids": []}]
        if name == "ERASE_WRITER_FACTS":
            n = self.take(name, params["batch"])
            return [{"facts": n, "entity_ids": [], "indexed": []}]
        if name == "GET_ERASURE_POLICY":
            return [{"authored": None, "updated_at": None}]
        if name in ("PERSON_LEFT", "TENANT_LEFT"):
            return [{"left": 1 if self.keeps_arriving else 0}]
        if name == "UNATTRIBUTED":
            return [{"rows": 0}]
        if name == "FIND_SUBJECT":
            ada = (params["type"], params["name"]) == ("person", "ada lovelace")
            return [{"id": "e" * 32}] if ada and self.subject_facts >= 0 else []
        if name == "ERASE_SUBJECT_FACTS":
            n = min(self.subject_facts, params["batch"])
            self.subject_facts -= n
            return [{"facts": n, "sources": 2 * n, "entity_ids": [], "indexed": []}]
        if name == "ERASE_SUBJECT":
            return [{"entities": 3}]
        return []  # AUTHORED_SCOPES: no shared scope holds their writing; ADD_AUTHORED...


def erasing(tmp_path: Path, graph: Graph) -> tuple[Any, RecordingExecutor]:
    return services(graph, tmp_path, erasure_batch=2)


async def test_every_label_is_drained_in_batches_and_counted_into_the_receipt(
    tmp_path: Path,
) -> None:
    graph = Graph(
        {"ERASE_CHUNKS": 5, "ERASE_MEMORY": 1, "ERASE_SPANS": 2, "ERASE_ENTITY_MERGES": 3}
    )
    svc, recorder = erasing(tmp_path, graph)
    receipt = await erase.erase_me(svc, principal())
    assert receipt.status is jobs.ErasureStatus.DONE
    assert receipt.kind is ErasureKind.USER
    assert receipt.requested_by == erase.SELF
    assert receipt.matched
    assert (receipt.removed.chunks, receipt.removed.entries, receipt.removed.spans) == (5, 1, 2)
    assert receipt.removed.total_rows() == 8  # the merge records feed no counter
    # Batches of two until one comes back short: 2, 2, 1 chunks.
    assert recorder.names().count("ERASE_CHUNKS") == 3
    assert recorder.names().count("ERASE_ENTITY_MERGES") == 2
    # Each label's batch runs in the job's transaction, after its lock.
    [chunk_tx, *_] = [t for t in recorder.transactions if "ERASE_CHUNKS" in t]
    assert chunk_tx == ["LOCK_JOB", "ERASE_CHUNKS", "ADD_COUNTS"]
    # Every label of the person's scope, filtered by the person's scope key.
    scopes = {c.params["scope_key"] for c in recorder.calls if c.name in LABEL_STATEMENTS}
    assert len(scopes) == 1
    assert set(LABEL_STATEMENTS) <= set(recorder.names())
    assert jobs.journal_entries(svc) == []  # finished: not resumed at start-up


async def test_the_policy_delete_removes_the_facts_they_wrote_in_the_tenant(
    tmp_path: Path,
) -> None:
    graph = Graph({"ERASE_WRITER_FACTS": 3})
    svc, recorder = erasing(tmp_path, graph)
    receipt = await erase.erase_me(svc, principal())
    assert receipt.removed.facts == 3
    writer = [c for c in recorder.calls if c.name == "ERASE_WRITER_FACTS"]
    assert len(writer) == 2
    person = next(c for c in recorder.calls if c.name == "ERASE_CHUNKS").params["scope_key"]
    assert {c.params["writer_key"] for c in writer} == {person}
    assert {c.params["scope_key"] for c in writer} != {person}  # in the tenant's scope


async def test_an_admin_erases_a_named_member_and_is_named_as_requester(tmp_path: Path) -> None:
    svc, recorder = erasing(tmp_path, Graph({"ERASE_DOCUMENTS": 1}))
    receipt = await erase.erase_user(svc, ADMIN, "bob")
    assert receipt.requested_by == "alice"
    assert receipt.removed.documents == 1
    [opened] = [c for c in recorder.calls if c.name == "OPEN_JOB"]
    assert opened.params["user_id"] == "bob"
    assert opened.params["target_scope"] == "USER"
    scrub = [c for c in recorder.calls if c.name == "SCRUB_REQUESTER"]
    assert scrub[0].params["user_id"] == "bob"
    assert scrub[0].params["erased"] == erase.ERASED


async def test_naming_another_user_needs_the_admin_role(tmp_path: Path) -> None:
    svc, recorder = erasing(tmp_path, Graph())
    with pytest.raises(Forbidden):
        await erase.erase_user(svc, principal(), "bob")
    assert recorder.calls == []


async def test_data_that_keeps_arriving_stops_the_erasure_after_the_last_pass(
    tmp_path: Path,
) -> None:
    graph = Graph(keeps_arriving=True)
    svc, recorder = erasing(tmp_path, graph)
    with pytest.raises(Conflict, match="kept arriving"):
        await erase.erase_me(svc, principal())
    assert recorder.names().count("PERSON_LEFT") == erase.MAX_PASSES
    assert "FINISH_JOB" not in recorder.names()
    # Still running: the journal names it for the next start-up.
    [(tenant, job_id)] = jobs.journal_entries(svc)
    assert tenant == "acme"
    assert graph.jobs[job_id]["status"] == RUNNING


async def test_a_running_job_left_in_the_journal_is_finished_at_start_up(tmp_path: Path) -> None:
    graph = Graph(keeps_arriving=True)
    svc, _ = erasing(tmp_path, graph)
    with pytest.raises(Conflict):
        await erase.erase_me(svc, principal())
    graph.keeps_arriving = False
    graph.left["ERASE_CHUNKS"] = 1
    [receipt] = await erase.resume_pending(svc)
    assert receipt.status is jobs.ErasureStatus.DONE
    assert receipt.attempts == 2  # the same job, picked up again
    assert receipt.requested_by == erase.SELF
    assert receipt.removed.chunks == 1
    assert jobs.journal_entries(svc) == []


async def test_a_journal_entry_of_a_finished_job_is_dropped(tmp_path: Path) -> None:
    svc, recorder = erasing(tmp_path, Graph())
    jobs.journal_add(svc, "acme", "a" * 32)  # no such job
    assert await erase.resume_pending(svc) == []
    assert jobs.journal_entries(svc) == []
    assert recorder.names() == ["GET_JOB"]


async def test_a_subject_is_erased_with_its_facts_in_batches(tmp_path: Path) -> None:
    graph = Graph()
    graph.subject_facts = 3
    svc, recorder = erasing(tmp_path, graph)
    subject = EntityRef("Person", "  Ada   Lovelace ")
    receipt = await erase.erase_subject(svc, principal(), Scope.USER, subject)
    assert receipt.kind is ErasureKind.SUBJECT
    assert receipt.target_scope == "USER"
    assert (receipt.removed.facts, receipt.removed.fact_sources) == (3, 6)
    assert receipt.removed.entities == 3
    [found] = [c for c in recorder.calls if c.name == "FIND_SUBJECT"]
    assert (found.params["type"], found.params["name"]) == ("person", "ada lovelace")
    assert recorder.names().count("ERASE_SUBJECT_FACTS") == 2  # 2, then 1: short
    erased = [c for c in recorder.calls if c.name == "ERASE_SUBJECT"]
    assert [c.params["id"] for c in erased] == ["e" * 32]


async def test_a_subject_of_a_shared_scope_needs_the_admin_role(tmp_path: Path) -> None:
    svc, recorder = erasing(tmp_path, Graph())
    who = principal(memory_scopes=frozenset({Scope.USER, Scope.TENANT}))
    with pytest.raises(Forbidden, match="needs the admin role"):
        await erase.erase_subject(svc, who, Scope.TENANT, EntityRef("person", "Ada Lovelace"))
    assert recorder.calls == []


async def test_a_blank_subject_is_refused(tmp_path: Path) -> None:
    svc, recorder = erasing(tmp_path, Graph())
    with pytest.raises(InvalidArgument, match="type and name must not be blank"):
        await erase.erase_subject(svc, principal(), Scope.USER, EntityRef("person", "  "))
    assert recorder.calls == []


async def test_a_missing_subject_is_not_found_unless_its_job_is_running(tmp_path: Path) -> None:
    graph = Graph()
    svc, recorder = erasing(tmp_path, graph)
    nobody = EntityRef("person", "Nobody")
    with pytest.raises(NotFound, match="no such subject"):
        await erase.erase_subject(svc, principal(), Scope.USER, nobody)
    assert not any(c.write for c in recorder.calls)
    # An attempt that deleted the entity and stopped before finishing: the job is finished.
    graph.subject_facts = 0
    first = await erase.erase_subject(
        svc, principal(), Scope.USER, EntityRef("person", "Ada Lovelace")
    )
    [job] = graph.jobs.values()
    job.update(
        status=RUNNING,
        active_key=next(c for c in recorder.calls if c.name == "OPEN_JOB").params["active_key"],
    )
    graph.subject_facts = -1  # the entity is gone now
    again = await erase.erase_subject(
        svc, principal(), Scope.USER, EntityRef("person", "Ada Lovelace")
    )
    assert again.id == first.id
    assert recorder.names()[-2:] == ["FIND_RUNNING_JOB", "FINISH_JOB"]


def test_the_requester_is_named_only_for_an_admin_acting_on_another() -> None:
    assert erase._requester(principal()) == erase.SELF
    assert erase._requester(ADMIN) == "alice"
    assert erase._requester(replace(ADMIN, user_id=None)) == "planner"
