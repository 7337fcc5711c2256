"""recall and search as the doors call them: the limits, the defaults and the server's ranking
settings are applied here, once, whatever door the arguments came through."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.ranking import fusion as pure
from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.resolvers.recall import asks
from tests.unit.principals import principal
from tests.unit.recording import services


def nothing(statement: Statement, params: dict[str, Any]) -> list[Row]:
    """An empty scope: no rows, no statistics (``READ_TEXT_SIDE`` always answers one row)."""
    if statement.name == "READ_TEXT_SIDE":
        return [{"stats": [], "memory": None, "chunk": None, "fact": None}]
    return []


def test_the_request_carries_the_servers_ranking_settings(tmp_path: Path) -> None:
    svc, _ = services(
        nothing,
        tmp_path,
        rrf_k=17,
        recall_pool_factor=3,
        rrf_vector_weight=0.5,
        rrf_fulltext_weight=2.0,
        recall_date_boost=2.5,
    )
    req = asks.request_of(svc, asks.Ask("where is it", top_k=7), pure.RECALL_DEFAULT)
    assert (req.rrf_k, req.pool_factor, req.vector_weight, req.fulltext_weight) == (17, 3, 0.5, 2.0)
    assert req.levers.date_boost == 2.5
    assert req.top_k == 7
    assert req.sources == pure.RECALL_DEFAULT


def test_recall_and_search_differ_only_in_their_default_sources(tmp_path: Path) -> None:
    svc, _ = services(nothing, tmp_path)
    ask = asks.Ask("q")
    assert asks.request_of(svc, ask, pure.RECALL_DEFAULT).sources == pure.RECALL_DEFAULT
    assert asks.request_of(svc, ask, pure.SEARCH_DEFAULT).sources == pure.SEARCH_DEFAULT
    chosen = asks.request_of(svc, asks.Ask("q", sources=["notes"]), pure.SEARCH_DEFAULT)
    assert chosen.sources == frozenset({pure.Source.NOTES})
    assert pure.RECALL_DEFAULT != pure.SEARCH_DEFAULT


@pytest.mark.parametrize("top_k", [0, -1, asks.MAX_TOP_K + 1])
def test_top_k_outside_its_bounds_is_refused(tmp_path: Path, top_k: int) -> None:
    svc, _ = services(nothing, tmp_path)
    with pytest.raises(InvalidArgument, match=str(asks.MAX_TOP_K)):
        asks.request_of(svc, asks.Ask("q", top_k=top_k), pure.RECALL_DEFAULT)


def test_unknown_sources_and_bad_windows_are_refused_not_ignored(tmp_path: Path) -> None:
    svc, _ = services(nothing, tmp_path)
    with pytest.raises(InvalidArgument):
        asks.request_of(svc, asks.Ask("q", sources=["everything"]), pure.RECALL_DEFAULT)
    backwards = asks.When(
        start=datetime(2024, 2, 1, tzinfo=UTC), end=datetime(2024, 1, 1, tzinfo=UTC)
    )
    with pytest.raises(InvalidArgument):
        asks.request_of(svc, asks.Ask("q", when=backwards), pure.RECALL_DEFAULT)


async def test_also_scopes_are_resolved_and_searched_beside_the_scope(tmp_path: Path) -> None:
    svc, recorder = services(nothing, tmp_path)
    ask = asks.Ask("where is the ficus", also_scopes=[Scope.TENANT])
    result = await asks.search(svc, principal(), ask)
    assert result.scopes == [Scope.USER, Scope.TENANT]
    keys = {c.params.get("scope_key") for c in recorder.calls}
    assert keys == {scope_key("acme", Scope.USER, "alice"), scope_key("acme", Scope.TENANT, "acme")}


async def test_a_scope_the_token_does_not_reach_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    svc, recorder = services(nothing, tmp_path)
    with pytest.raises(Forbidden):
        await asks.recall(svc, principal(), asks.Ask("q", scope=Scope.GLOBAL))
    assert recorder.calls == []
