"""Provenance as GraphQL renders it, decoded by the core for the reader: the writer of a row
is shown within its own tenant and to platform operators; across tenants (GLOBAL rows)
everyone else sees only what the row says about its origin (issue 11, finding 5)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest
import strawberry

from palimpsest.graphql.types import Provenance
from palimpsest.identity import Principal, Role
from palimpsest.resolvers.common import provenance_from
from palimpsest.schema import models
from tests.unit.principals import principal

JUDGED = datetime(2026, 1, 2, tzinfo=UTC)
QUOTE = models.SourceQuote(chunk_id="c" * 32, start=1, end=5, text="abcd")


def row(tenant: str) -> dict[str, Any]:
    return {
        "tenant_id": tenant,
        "session_id": "ses_writer",
        "run_id": "run_writer",
        "agent_name": "their-agent",
        "model": "their-model",
        "origin": "agent",
        "compaction_generation": 3,
        "judged_by": "judge",
        "judged_at": JUDGED,
    }


def render(reader: Principal, stored: dict[str, Any]) -> dict[str, Any]:
    decoded = replace(provenance_from(stored, reader), source_quote=QUOTE)

    @strawberry.type
    class Query:
        @strawberry.field
        def provenance(self) -> Provenance:
            return Provenance.of(decoded)

    schema = strawberry.Schema(query=Query)
    result = schema.execute_sync(
        "{ provenance { tenant session run agent model origin compactionGeneration"
        " sourceQuote { chunkId start end text } judgedBy judgedAt } }",
        context_value=SimpleNamespace(principal=reader),
    )
    assert result.errors is None, result.errors
    assert result.data is not None
    shown: dict[str, Any] = result.data["provenance"]
    return shown


ALWAYS = {
    "origin": "AGENT",
    "compactionGeneration": 3,
    "sourceQuote": {"chunkId": "c" * 32, "start": 1, "end": 5, "text": "abcd"},
    "judgedBy": "judge",
    "judgedAt": JUDGED.isoformat(),
}
WRITER = {
    "session": "ses_writer",
    "run": "run_writer",
    "agent": "their-agent",
    "model": "their-model",
}
HIDDEN = {"tenant": "", "session": None, "run": None, "agent": None, "model": None}


@pytest.mark.parametrize(
    "reader",
    [
        principal(),
        principal(roles=frozenset({Role.ADMIN})),
        principal(roles=frozenset({Role.ADMIN}), agent_name=None),
        principal(tenant_id=""),
    ],
)
def test_a_global_row_hides_its_writer_from_everyone_but_operators(reader: Principal) -> None:
    assert render(reader, row("")) == {**ALWAYS, **HIDDEN}


def test_another_tenants_row_hides_its_writer() -> None:
    assert render(principal(), row("other")) == {**ALWAYS, **HIDDEN}


def test_the_own_tenants_rows_show_their_writer() -> None:
    assert render(principal(), row("acme")) == {**ALWAYS, **WRITER, "tenant": "acme"}


@pytest.mark.parametrize("tenant", ["", "other", "acme"])
def test_operators_see_the_writer_everywhere(tenant: str) -> None:
    operator = principal(tenant_id="elsewhere", roles=frozenset({Role.OPERATOR}))
    assert render(operator, row(tenant)) == {**ALWAYS, **WRITER, "tenant": tenant}
