"""Supersession conflicts, on a recording executor: a refused supersession writes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Conflict, NotFound
from palimpsest.identity import Scope
from palimpsest.resolvers.facts import ledger as facts
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

A, B, C = "a" * 32, "b" * 32, "c" * 32


def pair(**row: Any) -> Any:
    base = {
        "a_superseded_by": None,
        "a_valid_at": None,
        "b_supersedes": None,
        "b_expired_at": None,
        "b_valid_at": None,
    }

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        assert statement.name == "LOCK_PAIR", statement.name
        return [{**base, **row}] if row.get("exists", True) else []

    return answer


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"a_superseded_by": C}, f"already superseded by {C}"),
        ({"b_supersedes": C}, f"already supersedes {C}"),
        ({"b_expired_at": NOW}, "itself retired"),
    ],
)
async def test_a_second_replacement_is_a_conflict_that_writes_nothing(
    tmp_path: Path, row: dict[str, Any], message: str
) -> None:
    svc, recorder = services(pair(**row), tmp_path)
    with pytest.raises(Conflict, match=message) as refused:
        await facts.supersede(svc, principal(), Scope.USER, A, B)
    if "a_superseded_by" in row:
        assert refused.value.details == {"superseded_by": C}  # names the newer fact
    assert recorder.names() == ["LOCK_PAIR"]


async def test_a_missing_pair_is_not_found(tmp_path: Path) -> None:
    svc, recorder = services(pair(exists=False), tmp_path)
    with pytest.raises(NotFound):
        await facts.supersede(svc, principal(), Scope.USER, A, B)
    assert recorder.names() == ["LOCK_PAIR"]
