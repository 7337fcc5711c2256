"""``context``'s floor on its hits: checked before anything is read, and handed to the recall
core as recall's ``minScore`` (the setting's when the call gives none), with a no-cosine hit
standing on a full-text rank within recall's default topK."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall import context_block as ctx
from palimpsest.resolvers.recall.planner import RecallResult
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal
from tests.unit.recording import services


def nothing(statement: Statement, params: dict[str, Any]) -> list[Row]:
    return []


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[asks.Ask]:
    """The asks ``context`` hands the recall core (which answers no hits)."""
    seen: list[asks.Ask] = []

    async def search(svc: Services, who: Principal, ask: asks.Ask) -> RecallResult:
        seen.append(ask)
        return RecallResult(hits=[], sources_applied=True, time_filter=None, scopes=[ask.scope])

    monkeypatch.setattr(asks, "search", search)
    monkeypatch.setattr(ctx, "count_tokens", lambda _e, texts: [len(t.split()) for t in texts])
    return seen


@pytest.mark.parametrize("floor", [1.01, -1.5, float("nan")])
async def test_a_floor_out_of_bounds_is_refused_before_anything_is_read(
    tmp_path: Path, asked: list[asks.Ask], floor: float
) -> None:
    svc, recorder = services(nothing, tmp_path)
    with pytest.raises(InvalidArgument, match="minScore"):
        await ctx.context(svc, principal(), Scope.USER, "Ada", 200, min_score=floor)
    assert recorder.calls == []
    assert asked == []


@pytest.mark.parametrize(("given", "setting", "floor"), [(None, 0.45, 0.45), (-1.0, 0.45, -1.0)])
async def test_the_floor_reaches_the_search_as_recalls_min_score(
    tmp_path: Path, asked: list[asks.Ask], given: float | None, setting: float, floor: float
) -> None:
    svc, _ = services(nothing, tmp_path, context_min_score=setting)
    block = await ctx.context(svc, principal(), Scope.USER, "Ada", 2000, min_score=given)
    assert block.items == ()
    [ask] = asked
    assert ask.controls.min_score == floor
    assert ask.controls.fulltext_within == asks.DEFAULT_TOP_K
    assert ask.top_k == ctx.top_k_for(2000) == 50
