"""Start-up's warm-up on a recording executor: what it asks the database, and its states."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest
from neo4j.exceptions import CypherSyntaxError

from palimpsest.config import Settings
from palimpsest.cypher import recall_one, recall_procedure
from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.cypher.extension import SearchEngine
from palimpsest.errors import Unavailable
from palimpsest.graphql.limits import EdgeLimits
from palimpsest.graphql.schema import build_schema
from palimpsest.resolvers.services import Services
from palimpsest.warmup import Warmup, check_documents, client_documents, plan_all, run_reads
from tests.unit.recording import services

SCHEMA = build_schema()._schema
LIMITS = EdgeLimits.of(Settings())
FINE = Statement("PROBE_FINE", "MATCH (m:Memory {scope_key: $scope_key}) RETURN m.key AS key")
OTHER = Statement("PROBE_OTHER", "CYPHER 25 MATCH (c:Chunk {scope_key: $scope_key}) RETURN c")


def nothing(statement: Statement, params: dict[str, Any]) -> list[Row]:
    """What an empty scope answers."""
    if statement.name == "READ_TEXT_SIDE":
        return [{"stats": [], "memory": None, "chunk": None, "fact": None}]
    if statement.name == "LOAD_HITS":
        return [{"notes": [], "chunks": [], "facts": []}]
    return []


def run(warmup: Warmup, svc: Services, bound: float = 60.0) -> None:
    asyncio.run(warmup.run(svc, SCHEMA, LIMITS, bound))


def test_the_reads_only_read_and_only_a_scope_of_their_own(tmp_path: Path) -> None:
    svc, recorder = services(nothing, tmp_path)
    asyncio.run(run_reads(svc, Warmup().principal))
    assert recorder.calls
    assert not any(c.write for c in recorder.calls)  # nothing written anywhere
    tenants = {c.params["tenant_id"] for c in recorder.calls if "tenant_id" in c.params}
    assert len(tenants) == 1
    assert next(iter(tenants)).startswith("palimpsest-warmup-")
    # A tenant of its own per start: no token can name it in advance.
    again, recorder2 = services(nothing, tmp_path)
    asyncio.run(run_reads(again, Warmup().principal))
    assert {c.params.get("tenant_id") for c in recorder2.calls} - {None} != tenants


def test_every_statement_is_planned_not_run_in_one_read(tmp_path: Path) -> None:
    svc, recorder = services(nothing, tmp_path)
    warmup = Warmup(statements=[FINE, OTHER], documents=[])
    run(warmup, svc)
    planned = recorder.transactions[-1]
    assert planned == ["PROBE_FINE", "PROBE_OTHER"]
    explains = [c for c in recorder.calls if c.name in ("PROBE_FINE", "PROBE_OTHER")]
    assert all(not c.write and c.params == {} for c in explains)
    assert warmup.wire() == {"status": "warm", "seconds": warmup.seconds, "skipped": []}


def test_statements_are_sent_behind_explain(tmp_path: Path) -> None:
    sent: list[str] = []

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        sent.append(statement.text)
        return []

    svc, _ = services(answer, tmp_path)
    asyncio.run(plan_all(svc, [FINE, OTHER]))
    assert sent[0].startswith("EXPLAIN MATCH (m:Memory")
    assert sent[1].startswith("CYPHER 25 EXPLAIN MATCH (c:Chunk")


def test_the_procedure_engines_statements_are_planned_only_where_it_answers(
    tmp_path: Path,
) -> None:
    sent: list[str] = []

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        sent.append(statement.name)
        return []

    svc, _ = services(answer, tmp_path)
    procedure = [
        recall_procedure.PROC_TERMS_MEMORY,
        recall_procedure.PROC_TERMS_FACTS,
        recall_one.SEARCH_ONE,
    ]
    statements = [FINE, *procedure]
    asyncio.run(plan_all(svc, statements))  # the Cypher engine: no extension to plan against
    assert sent == ["PROBE_FINE"]
    sent.clear()
    on_procedure = dataclasses.replace(svc, search_engine=SearchEngine("procedure", "test"))
    asyncio.run(plan_all(on_procedure, statements))
    assert sent == [s.name for s in statements]


def test_a_statement_that_cannot_be_planned_fails_the_warm_up_by_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "PROBE_OTHER":
            try:
                raise CypherSyntaxError._hydrate_neo4j(
                    code="Neo.ClientError.Statement.SyntaxError", message="secret text"
                )
            except CypherSyntaxError as e:
                raise Unavailable("the database refused the statement") from e
        return nothing(statement, params)

    svc, _ = services(answer, tmp_path)
    warmup = Warmup(statements=[FINE, OTHER, FINE], documents=[])
    with caplog.at_level("ERROR", logger="palimpsest.warmup"):
        run(warmup, svc)
    assert warmup.state == "failed"
    assert warmup.wire() == {
        "status": "failed",
        "step": "statements",
        "name": "PROBE_OTHER",
        "code": "Neo.ClientError.Statement.SyntaxError",
    }
    lines = [r.getMessage() for r in caplog.records if r.name == "palimpsest.warmup"]
    assert len(lines) == 1
    assert "PROBE_OTHER" in lines[0]
    assert "secret" not in lines[0]


def test_a_document_the_schema_refuses_fails_the_warm_up(tmp_path: Path) -> None:
    svc, _ = services(nothing, tmp_path)
    warmup = Warmup(statements=[], documents=["query Nope { nope }"])
    run(warmup, svc)
    assert warmup.failure == {"step": "documents", "name": "Nope", "code": "INVALID_ARGUMENT"}


def test_the_client_documents_are_all_valid() -> None:
    documents = client_documents()
    assert len(documents) > 40
    assert any(d.startswith("query Recall(") for d in documents)
    check_documents(SCHEMA, LIMITS, documents)  # raises on the first invalid one


def test_past_the_bound_the_server_serves_and_says_what_was_left(tmp_path: Path) -> None:
    svc, _ = services(nothing, tmp_path)

    async def forever(_: Services) -> None:
        await asyncio.sleep(3600)

    warmup = Warmup(statements=[FINE], documents=[], extra=[("forever", forever)])
    # The bound leaves the recorded steps time to finish on a busy machine; only the
    # endless step is left.
    run(warmup, svc, bound=1.0)
    assert warmup.state == "warm"
    assert warmup.wire()["skipped"] == ["forever"]


def test_a_bound_of_zero_warms_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    svc, recorder = services(nothing, tmp_path)
    warmup = Warmup(statements=[FINE], documents=[])
    with caplog.at_level("INFO", logger="palimpsest.warmup"):
        run(warmup, svc, bound=0)
    assert caplog.records == []  # switched off, not stopped by its bound
    assert warmup.state == "warm"
    assert recorder.calls == []
    steps = ["sql", "model", "documents", "reads", "writes", "statements", "drive"]
    assert warmup.wire()["skipped"] == steps


def test_warming_reports_the_steps_left() -> None:
    warmup = Warmup(statements=[], documents=[])
    warmup.left = ["reads", "statements"]
    assert warmup.wire() == {"status": "warming", "left": ["reads", "statements"]}
