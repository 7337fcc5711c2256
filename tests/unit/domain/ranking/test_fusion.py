from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.domain.ranking.fusion import (
    RECALL_DEFAULT,
    Missing,
    Source,
    parse_slack,
    parse_sources,
    parse_window,
    rrf,
)
from palimpsest.errors import InvalidArgument


def test_rrf_scores_ranks_from_one_with_k_60() -> None:
    fused = rrf({"vector": ["a", "b", "c", "d"], "fulltext": ["d"]})
    assert [f.id for f in fused] == ["d", "a", "b", "c"]
    assert fused[0].score == pytest.approx(1 / 64 + 1 / 61)
    assert fused[1].score == pytest.approx(1 / 61)
    assert dict(fused[0].ranks) == {"vector": 4, "fulltext": 1}
    assert all(f.score <= 2 / 61 for f in fused)


def test_rrf_with_one_empty_leg_keeps_the_other_legs_order() -> None:
    fused = rrf({"vector": ["x", "y", "z"], "fulltext": []})
    assert [f.id for f in fused] == ["x", "y", "z"]
    scores = [f.score for f in fused]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == 3


def test_rrf_ties_keep_first_seen_order_and_weights_apply() -> None:
    assert [f.id for f in rrf({"a": ["p", "q"], "b": ["q", "p"]})] == ["p", "q"]
    weighted = rrf({"a": ["p"], "b": ["q"]}, weights={"a": 1.0, "b": 2.0})
    assert [f.id for f in weighted] == ["q", "p"]
    assert rrf({"a": ["p", "p"]})[0].score == pytest.approx(1 / 61)
    with pytest.raises(InvalidArgument):
        rrf({"a": ["p"]}, k=0)


def test_a_row_one_list_missed_ranks_just_past_that_lists_depth() -> None:
    # "top" heads one list of depth 3 and is missing from the other: it ranks 4th there.
    legs = {"vector": ["a", "b", "deep"], "fulltext": ["top", "c", "deep"]}
    fused = {f.id: f for f in rrf(legs, depth=3)}
    assert fused["top"].score == pytest.approx(1 / 61 + 1 / 64)
    assert fused["top"].beyond == ("vector",)
    assert dict(fused["top"].ranks) == {"fulltext": 1}
    assert fused["deep"].score == pytest.approx(2 / 63)
    assert fused["deep"].beyond == ()
    # Without a depth a missing row scores nothing there: listed twice, however deep, wins.
    assert rrf(legs)[0].id == "deep"
    assert [f.id for f in rrf(legs, depth=3)] == ["a", "top", "b", "c", "deep"]


def test_absent_ranks_count_only_within_a_group() -> None:
    legs = {"v:notes": ["n1"], "f:notes": ["n2"], "v:facts": ["x1"]}
    groups = {"v:notes": "notes", "f:notes": "notes", "v:facts": "facts"}
    fused = {f.id: f for f in rrf(legs, depth=5, groups=groups)}
    assert fused["n1"].beyond == ("f:notes",)
    assert fused["n2"].beyond == ("v:notes",)
    assert fused["x1"].beyond == ()  # no other list over facts ran
    assert fused["x1"].score == pytest.approx(1 / 61)
    weighted = rrf({"a": ["p"], "b": ["q"]}, weights={"a": 2.0}, depth=1)
    assert {f.id: f.score for f in weighted}["q"] == pytest.approx(1 / 61 + 2 / 62)
    with pytest.raises(InvalidArgument):
        rrf(legs, depth=0)


@given(
    st.dictionaries(
        st.sampled_from(["v", "f", "g"]),
        st.lists(st.text(min_size=1, max_size=3), unique=True, max_size=20),
    )
)
def test_rrf_properties(legs: dict[str, list[str]]) -> None:
    fused = rrf(legs)
    everything = {i for ids in legs.values() for i in ids}
    assert {f.id for f in fused} == everything
    assert [f.score for f in fused] == sorted((f.score for f in fused), reverse=True)
    for f in fused:
        assert f.score == pytest.approx(sum(1 / (60 + r) for r in f.ranks.values()))


def test_sources_are_exact_and_refuse_typos() -> None:
    assert parse_sources(None, RECALL_DEFAULT) == {Source.FACTS, Source.NOTES}
    assert parse_sources(["Documents", " facts "], RECALL_DEFAULT) == {
        Source.DOCUMENTS,
        Source.FACTS,
    }
    for bad in (["fact"], [], ["notes", "traces"]):
        with pytest.raises(InvalidArgument):
            parse_sources(bad, RECALL_DEFAULT)


OCT_3 = datetime(2023, 10, 3, tzinfo=UTC)
OCT_4 = datetime(2023, 10, 4, tzinfo=UTC)


def test_window_modes_and_slack() -> None:
    window = parse_window(OCT_3, OCT_4, "require", None)
    assert window is not None
    late = datetime(2023, 10, 4, 14, tzinfo=UTC)
    assert window.contains(late) is True  # within the default 72 h slack
    exact = parse_window(OCT_3, OCT_4, "REQUIRE", "0h")
    assert exact is not None
    assert exact.contains(late) is False
    assert exact.contains(None) is None
    prefer = parse_window(OCT_3, OCT_4, None, None)
    assert prefer is not None
    assert prefer.missing is Missing.PREFER
    assert prefer.contains(late) is False  # prefer ranks; its bounds are not widened
    assert parse_window(None, None, None, None) is None
    assert parse_slack("3d") == parse_slack("72h") == timedelta(hours=72)


@pytest.mark.parametrize(
    ("start", "end", "missing", "slack"),
    [
        (OCT_4, OCT_3, None, None),
        (None, None, "prefered", None),
        (None, None, None, "-1d"),
        (None, None, None, "soon"),
        (None, None, None, "3651d"),  # over the ten-year cap
        (None, None, None, "99999999999999999999d"),  # would overflow timedelta
        (None, None, None, "\u0663d"),  # an Arabic-Indic digit is not a number here
    ],
)
def test_bad_windows_are_refused(
    start: datetime | None, end: datetime | None, missing: str | None, slack: str | None
) -> None:
    with pytest.raises(InvalidArgument):
        parse_window(start, end, missing, slack)


def test_slack_at_the_cap_fits_a_graphql_int_and_edges_do_not_overflow() -> None:
    most = parse_slack("3650d")
    assert most == timedelta(days=3650)
    assert most.total_seconds() < 2**31  # reported as timeFilter.slackSeconds (Int)
    window = parse_window(
        datetime(1, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, tzinfo=UTC), "require", "3650d"
    )
    assert window is not None
    # Widening bounds at the ends of the calendar holds them there instead of overflowing.
    assert window.contains(datetime(1, 1, 1, tzinfo=UTC)) is True
    assert window.contains(datetime(9999, 12, 31, 23, tzinfo=UTC)) is True
