"""Quotas of the fact plane (``resolvers.quotas``) on a recording executor: a bound under the
limit is raised in the statement that takes the lock, without counting; over it, the exact
count decides and a refusal names it."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.cypher.quotas import COUNTERS
from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas
from palimpsest.schema.drafts import EntityRef, FactDraft
from tests.unit.principals import principal
from tests.unit.recording import NOW, services


def fits(bounds: Mapping[str, int | None], added: list[dict[str, Any]]) -> bool:
    """What ``RAISE_QUOTA_COUNTERS`` decides: every bound known and within its limit."""
    return all(
        bounds.get(c["counter"]) is not None
        and (c["limit"] == 0 or int(bounds[c["counter"]] or 0) + c["n"] <= c["limit"])
        for c in added
    )


def script(bounds: Mapping[str, int | None], used: int, created: int = 2) -> Any:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        match statement.name:
            case "CREATED_QUOTA_ENTITIES":
                return [{"created": created}]
            case "RAISE_QUOTA_COUNTERS":
                row: Row = {c: bounds.get(c) for c in COUNTERS}
                return [{**row, "fits": fits(bounds, params["added"])}]
            case "COUNT_QUOTA_FACTS" | "COUNT_QUOTA_ENTITIES":
                return [{"used": used}]
            case _:
                return []

    return answer


async def admit(svc: Services, facts: int) -> None:
    rows = prepare(
        [FactDraft(EntityRef("person", "ada"), "lives in", EntityRef("city", "x"), None)]
    )
    ref = resolve_scope(principal(), Scope.USER)
    await svc.db.scoped(ref).write_tx(
        lambda tx: quotas.admit_facts(tx, svc.settings, rows, facts, NOW)
    )


async def test_a_bound_under_the_limit_is_raised_without_counting(tmp_path: Path) -> None:
    bounds = {"quota_facts": 5, "quota_entities": 7}
    svc, recorder = services(script(bounds, used=0), tmp_path, max_scope_facts=10)
    await admit(svc, facts=1)
    assert recorder.names() == ["CREATED_QUOTA_ENTITIES", "RAISE_QUOTA_COUNTERS"]
    [created, raised] = recorder.calls
    assert len(created.params["ids"]) == 2  # the subject's and the object's minted ids
    assert {c["counter"]: c["n"] for c in raised.params["added"]} == {
        "quota_entities": 2,
        "quota_facts": 1,
    }
    assert {c["limit"] for c in raised.params["added"] if c["counter"] == "quota_facts"} == {10}


async def test_over_the_limit_the_exact_count_refuses_and_names_the_setting(
    tmp_path: Path,
) -> None:
    bounds = {"quota_facts": 10, "quota_entities": 0}
    svc, recorder = services(script(bounds, used=11), tmp_path, max_scope_facts=10)
    with pytest.raises(QuotaExceeded) as refused:
        await admit(svc, facts=1)
    assert refused.value.details["setting"] == "PALIMPSEST_MAX_SCOPE_FACTS"
    assert (refused.value.details["usage"], refused.value.details["after"]) == (10, 11)
    assert "SET_QUOTA_COUNTERS" not in recorder.names()


async def test_an_unknown_bound_is_counted_exactly_and_kept(tmp_path: Path) -> None:
    svc, recorder = services(script({}, used=3, created=0), tmp_path)
    await admit(svc, facts=1)
    assert "COUNT_QUOTA_FACTS" in recorder.names()
    assert "COUNT_QUOTA_ENTITIES" not in recorder.names()  # no entity was created
    [counted] = [c for c in recorder.calls if c.name == "SET_QUOTA_COUNTERS"]
    assert counted.params["counters"] == {"quota_facts": 3}


async def test_nothing_created_takes_no_lock(tmp_path: Path) -> None:
    svc, recorder = services(script({}, used=0, created=0), tmp_path)
    await admit(svc, facts=0)
    assert recorder.names() == ["CREATED_QUOTA_ENTITIES"]
