"""Recall's per-call controls in the core: bounds checked once, whatever door, and each
control's effect on a ranking (and its trace in ``explain``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.ranking import fusion as pure
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall import controls as rc
from palimpsest.resolvers.recall import planner as rr
from palimpsest.resolvers.recall.hits import Explain, Hit
from tests.unit.principals import principal
from tests.unit.recording import services
from tests.unit.resolvers.recall.test_planner import answering, chunk_rows, request

T0 = datetime(2025, 6, 1, tzinfo=UTC)


def nothing(statement: Statement, params: dict[str, Any]) -> list[Row]:
    return []


def hit(
    i: str,
    score: float = 1.0,
    cosine: float | None = None,
    fulltext_rank: int | None = None,
    observed: datetime | None = None,
    kind: pure.Source = pure.Source.NOTES,
) -> Hit:
    return Hit(
        kind,
        Scope.USER,
        i,
        "",
        score=score,
        cosine=cosine,
        fulltext_rank=fulltext_rank,
        observed_at=observed,
        explain=Explain([], [], score),
    )


def ask(**controls: Any) -> asks.Ask:
    return asks.Ask("where is the ferry", controls=asks.Controls(**controls))


def test_no_control_changes_nothing_in_the_request(tmp_path: Path) -> None:
    svc, _ = services(nothing, tmp_path, rrf_vector_weight=0.5, rrf_fulltext_weight=2.0)
    req = asks.request_of(svc, asks.Ask("q"), pure.RECALL_DEFAULT)
    assert req.controls == rc.Applied()
    assert (req.vector_weight, req.fulltext_weight) == (0.5, 2.0)
    hits = [hit("a", 0.3), hit("b", 0.2, observed=T0)]
    assert rc.weigh_recency(hits, req.controls, T0) == hits
    assert rc.floor(hits, req.controls, 1) == hits
    assert [h.score for h in hits] == [0.3, 0.2]
    assert all(h.explain is not None and not h.explain.boosts for h in hits)


@pytest.mark.parametrize(
    ("controls", "field"),
    [
        ({"min_score": 1.5}, "minScore"),
        ({"min_score": -1.01}, "minScore"),
        ({"min_score": float("nan")}, "minScore"),
        ({"recency_half_life": "30"}, "recencyHalfLife"),
        ({"recency_half_life": "0d"}, "recencyHalfLife"),
        ({"recency_half_life": "-3d"}, "recencyHalfLife"),
        ({"recency_half_life": "3 years"}, "recencyHalfLife"),
        ({"recency_half_life": "36501d"}, "recencyHalfLife"),
        ({"weights": asks.LegWeights(vector=-1.0)}, "weights.vector"),
        ({"weights": asks.LegWeights(fulltext=float("inf"))}, "weights.fulltext"),
        ({"weights": asks.LegWeights(vector=101.0)}, "weights.vector"),
        ({"weights": asks.LegWeights(vector=0.0, fulltext=0.0)}, "both be 0"),
        ({"max_per_document": 0}, "maxPerDocument"),
        ({"max_per_document": rc.MAX_PER_DOCUMENT + 1}, "maxPerDocument"),
    ],
)
def test_a_control_out_of_its_bounds_is_refused_naming_it(
    tmp_path: Path, controls: dict[str, Any], field: str
) -> None:
    svc, recorder = services(nothing, tmp_path)
    with pytest.raises(InvalidArgument, match=field):
        asks.request_of(svc, ask(**controls), pure.RECALL_DEFAULT)
    assert recorder.calls == []


def test_weights_override_the_settings_leg_by_leg(tmp_path: Path) -> None:
    svc, _ = services(nothing, tmp_path, rrf_vector_weight=0.5, rrf_fulltext_weight=2.0)
    only_text = asks.request_of(svc, ask(weights=asks.LegWeights(vector=0.0)), pure.RECALL_DEFAULT)
    assert (only_text.vector_weight, only_text.fulltext_weight) == (0.0, 2.0)
    both = asks.request_of(
        svc, ask(weights=asks.LegWeights(vector=3.0, fulltext=1.0)), pure.RECALL_DEFAULT
    )
    assert (both.vector_weight, both.fulltext_weight) == (3.0, 1.0)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("30d", 30 * 86400), ("12h", 12 * 3600), ("2w", 14 * 86400), ("90m", 5400), (" 45S ", 45)],
)
def test_half_lives_read_like_the_window_slack(text: str, seconds: int) -> None:
    assert rc.parse_half_life(text) == timedelta(seconds=seconds)


def test_recency_halves_the_score_per_half_life_and_never_drops(tmp_path: Path) -> None:
    applied = rc.check(rc.Controls(recency_half_life="10d"), None)
    old, new = hit("old", observed=T0 - timedelta(days=20)), hit("new", observed=T0)
    undated, future = hit("undated"), hit("future", observed=T0 + timedelta(days=5))
    hits = rc.weigh_recency([old, new, undated, future], applied, T0)
    old, new, undated, future = hits
    assert old.score == pytest.approx(0.25)  # two half-lives old
    assert (new.score, undated.score, future.score) == (1.0, 1.0, 1.0)
    assert old.explain is not None
    assert old.explain.boosts[0].lever == rc.RECENCY
    assert old.explain.boosts[0].factor == pytest.approx(0.25)
    assert undated.explain is not None
    assert undated.explain.boosts == []
    assert len(hits) == 4


def test_recency_is_measured_from_when_to_when_given(tmp_path: Path) -> None:
    svc, _ = services(nothing, tmp_path)
    window = asks.When(end=T0 - timedelta(days=10))
    req = asks.request_of(
        svc,
        asks.Ask("q", when=window, controls=rc.Controls(recency_half_life="10d")),
        pure.RECALL_DEFAULT,
    )
    h = hit("x", observed=T0 - timedelta(days=20))
    [h] = rc.weigh_recency([h], req.controls, T0)  # ten days before when.to: one half-life
    assert h.score == pytest.approx(0.5)


def test_min_score_floors_the_cosine_and_keeps_no_cosine_rows_by_their_fulltext_rank() -> None:
    applied = rc.check(rc.Controls(min_score=0.5), None)
    good, poor = hit("good", cosine=0.7), hit("poor", cosine=0.2, fulltext_rank=1)
    words, deep = hit("words", fulltext_rank=3), hit("deep", fulltext_rank=4)
    kept = rc.floor([good, poor, words, deep], applied, top_k=3)
    assert [h.id for h in kept] == ["good", "words"]
    assert [h.explain.floor for h in kept if h.explain] == ["cosine", "fulltext"]


def test_context_counts_the_fulltext_rank_within_its_own_bound_not_the_top_k() -> None:
    """``context`` asks for up to 50 hits; a no-cosine row stands on a rank within 10."""
    applied = rc.check(rc.Controls(min_score=0.5, fulltext_within=2), None)
    words, deep = hit("words", fulltext_rank=2), hit("deep", fulltext_rank=3)
    assert [h.id for h in rc.floor([words, deep], applied, top_k=50)] == ["words"]


async def test_max_per_document_caps_each_document_and_leaves_other_rows_alone(
    tmp_path: Path,
) -> None:
    documents = {f"c{i:031d}": ("d1" if i % 2 == 0 else "d2") for i in range(8)}

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "CHUNK_DOCUMENTS":
            return [{"id": i, "document_id": documents[i]} for i in params["ids"] if i in documents]
        return chunk_rows(10, live=10)  # c8 and c9 belong to no document the read knows

    svc, recorder = services(answering(answer), tmp_path)
    capped = replace(request(top_k=5), controls=rc.Applied(max_per_document=2))
    result = await rr.recall(svc, principal(), [Scope.USER], capped)
    assert [h.id[-1] for h in result.hits] == ["0", "1", "2", "3", "8"]
    assert [h.explain.document_place for h in result.hits if h.explain] == [1, 1, 2, 2, None]
    assert result.controls is not None
    assert (result.controls.max_per_document, result.controls.over_document_cap) == (2, 4)
    plain = await rr.recall(svc, principal(), [Scope.USER], request(top_k=5))
    assert [h.id[-1] for h in plain.hits] == ["0", "1", "2", "3", "4"]
    assert plain.controls is None
    assert [c.name for c in recorder.calls].count("CHUNK_DOCUMENTS") == 1  # only when asked


async def test_explain_shows_each_legs_weight(tmp_path: Path) -> None:
    svc, _ = services(answering(lambda s, p: chunk_rows(3, live=3)), tmp_path)
    req = replace(request(top_k=3), vector_weight=2.5)
    result = await rr.recall(svc, principal(), [Scope.USER], req)
    top = result.hits[0].explain
    assert top is not None
    assert [(p.leg, p.weight) for p in top.legs] == [("vector", 2.5)]
    assert top.legs[0].contribution == pytest.approx(2.5 / 61)


async def test_the_cap_reads_each_scopes_chunks_bound_to_that_scope(tmp_path: Path) -> None:
    alice, team = scope_key("acme", Scope.USER, "alice"), scope_key("acme", Scope.TENANT, "acme")
    prefix = {alice: "u", team: "t"}

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "CHUNK_DOCUMENTS":
            return []
        return chunk_rows(4, live=4, prefix=prefix[params["scope_key"]])

    svc, recorder = services(answering(answer), tmp_path)
    capped = replace(request(top_k=8), controls=rc.Applied(max_per_document=1))
    await rr.recall(svc, principal(), [Scope.USER, Scope.TENANT], capped)
    reads = {
        c.params["scope_key"]: c.params["ids"]
        for c in recorder.calls
        if c.name == "CHUNK_DOCUMENTS"
    }
    assert set(reads) == {alice, team}
    for key, ids in reads.items():
        # Each scope's read names only the candidates that scope's own legs returned.
        assert len(ids) == 4
        assert {i[0] for i in ids} == {prefix[key]}
