"""``judging.judge_now`` on a recording executor, with a judge of the test's own standing in
for the model: refused before any read without a judge, the scope checked first, the pairs
read, asked about with no statement running, then the verdicts and the count written apart;
the tokens counted in the caller's tenant scope."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Forbidden, InvalidArgument, Unavailable
from palimpsest.identity import Scope, resolve_scope
from palimpsest.identity.scopes import tenant_config_ref
from palimpsest.resolvers.cycle import MAX_JUDGE_LIMIT, judge_now
from palimpsest.schema.pairs import Judged, PairVerdict, PendingPair, Ruling, TokenCap
from tests.unit.principals import principal
from tests.unit.recording import RecordingExecutor, services

SIDE = {"text": "t", "predicate": "based in", "valid_at": None, "invalid_at": None}


def pair_row(i: int) -> Row:
    return {
        "id": f"p{i}",
        "older": {**SIDE, "observed_at": None},
        "older_subject": "Acme",
        "older_object": "Paris",
        "newer": {**SIDE, "observed_at": None},
        "newer_subject": "Acme",
        "newer_object": "Berlin",
    }


def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
    match statement.name:
        case "PENDING_FACT_PAIRS":
            return [pair_row(i) for i in range(min(2, params["limit"]))]
        case "RECORD_VERDICTS":
            return [{"judged": len(params["rulings"])}]
        case "COUNT_PENDING_FACT_PAIRS":
            return [{"pending": 3}]
        case "EXTRACTION_TOKENS":
            return [{"used": 0}]
    return []


class Judge:
    """Rules ``conflict`` on the first pair, fails the second; notes what it was shown."""

    name = "test"
    pairs_per_call = 20

    def __init__(self, recorder: RecordingExecutor) -> None:
        self.recorder = recorder
        self.seen: list[list[str]] = []
        self.statements_before: int = -1

    async def judge(self, pairs: Sequence[PendingPair], cap: TokenCap | None) -> Judged:
        assert cap is not None
        self.statements_before = len(self.recorder.calls)
        await cap.tokens_today()
        self.seen.append([p.id for p in pairs])
        ruling = Ruling(PairVerdict.CONFLICT, "no")
        return Judged({pairs[0].id: ruling}, "test:judge", [p.id for p in pairs[1:]], {})


async def test_without_a_judge_it_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    assert svc.judge is None
    with pytest.raises(Unavailable, match="PALIMPSEST_MODEL_URL"):
        await judge_now(svc, principal(), Scope.TENANT)
    assert recorder.calls == []


async def test_the_scope_and_the_limit_are_checked_first(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    svc = replace(svc, judge=Judge(recorder))
    with pytest.raises(Forbidden):
        await judge_now(svc, principal(), Scope.GLOBAL)
    with pytest.raises(InvalidArgument):
        await judge_now(svc, principal(), Scope.TENANT, MAX_JUDGE_LIMIT + 1)
    assert recorder.calls == []


async def test_pairs_are_read_then_judged_then_recorded_apart(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    judge = Judge(recorder)
    svc = replace(svc, judge=judge)
    who = principal()
    run = await judge_now(svc, who, Scope.TENANT, 5)
    assert (run.asked, run.judged, run.failed, run.pending) == (2, 1, 0, 3)
    assert judge.seen == [["p0", "p1"]]
    assert recorder.names() == [
        "PENDING_FACT_PAIRS",
        "EXTRACTION_TOKENS",
        "RECORD_VERDICTS",
        "COUNT_JUDGE_FAILURES",
        "COUNT_PENDING_FACT_PAIRS",
    ]
    # One statement per transaction: nothing is open while the judge is asked.
    assert all(len(names) == 1 for names in recorder.transactions)
    assert judge.statements_before == 1
    pending, tokens, verdicts, failures, count = recorder.calls
    scope_key = resolve_scope(who, Scope.TENANT).scope_key
    assert pending.params["limit"] == 5
    assert {pending.params["scope_key"], count.params["scope_key"]} == {scope_key}
    assert tokens.params["scope_key"] == tenant_config_ref(who).scope_key
    assert verdicts.write
    assert verdicts.params["judged_by"] == "test:judge"
    assert [r["id"] for r in verdicts.params["rulings"]] == ["p0"]
    assert failures.params["ids"] == ["p1"]


async def test_the_default_limit_is_one_call(tmp_path: Path) -> None:
    svc, recorder = services(answer, tmp_path)
    judge = Judge(recorder)
    judge.pairs_per_call = 1
    svc = replace(svc, judge=judge)
    run = await judge_now(svc, principal(), Scope.USER)
    assert recorder.calls[0].params["limit"] == 1
    assert run.asked == 1
