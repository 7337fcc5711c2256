"""The newer statement first, the pure order (domain/ranking/newer.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from palimpsest.domain.ranking.newer import (
    Placed,
    Told,
    later,
    order,
    revises,
    speaker_of,
    values_of,
)

T0 = datetime(2026, 1, 5, tzinfo=UTC)
SAME = [1.0, 0.0, 0.0]
NEAR = [0.9, 0.1, 0.0]  # cosine with SAME about 0.994
OTHER = [0.0, 0.0, 1.0]


def at(
    days: int, *, doc: str | None = None, place: int | None = None, who: str | None = None
) -> Told:
    return Told(T0 + timedelta(days=days), T0, doc, place, who)


def test_later_reads_observed_then_stored_then_place_in_one_document() -> None:
    assert later(at(2), at(1))
    assert not later(at(1), at(2))
    assert not later(at(1), at(1))
    stored = Told(T0, T0 + timedelta(hours=1))
    assert later(stored, Told(T0, T0))
    assert later(at(0, doc="d", place=5, who="ann"), at(0, doc="d", place=2, who="bo"))
    assert not later(at(0, doc="d", place=2, who="ann"), at(0, doc="d", place=5, who="ann"))
    # Equal times in two documents: no order either way.
    assert not later(at(0, doc="d", place=5, who="ann"), at(0, doc="e", place=2, who="ann"))
    assert not later(at(0, doc="e", place=2, who="ann"), at(0, doc="d", place=5, who="ann"))
    # Two paragraphs of one page (no speaker): the lower is no revision of the upper.
    assert not later(at(0, doc="d", place=5), at(0, doc="d", place=2))


def test_an_unknown_time_orders_nothing() -> None:
    unknown = Told(None, T0)
    assert not later(unknown, at(1))
    assert not later(at(1), unknown)
    assert later(Told(None, T0 + timedelta(1)), Told(None, T0))


def test_the_later_of_two_near_hits_goes_just_above_the_earlier() -> None:
    # ranks: earlier statement, something else, its later update
    got = order([SAME, OTHER, NEAR], [at(1), at(2), at(3)], 0.9)
    assert [p.index for p in got] == [2, 0, 1]
    assert got[0].above == 0
    assert got[0].cosine == pytest.approx(0.9939, abs=1e-3)
    assert got[1:] == [Placed(0), Placed(1)]


def test_already_newer_first_or_far_apart_is_left_alone() -> None:
    assert [p.index for p in order([NEAR, SAME], [at(3), at(1)], 0.9)] == [0, 1]
    assert [p.index for p in order([SAME, OTHER], [at(1), at(3)], 0.9)] == [0, 1]
    # Below the threshold: not the same matter.
    assert [p.index for p in order([SAME, NEAR], [at(1), at(3)], 0.999)] == [0, 1]


def test_other_speakers_do_not_revise_each_other() -> None:
    told = [at(1, who="user"), at(3, who="assistant")]
    assert [p.index for p in order([SAME, NEAR], told, 0.9)] == [0, 1]
    told = [at(1, who="user"), at(3, who="User")]
    assert [p.index for p in order([SAME, NEAR], told, 0.9)] == [1, 0]


def test_a_chain_of_revisions_is_newest_first() -> None:
    got = order([SAME, NEAR, SAME, OTHER], [at(1), at(2), at(3), at(0)], 0.9)
    assert [p.index for p in got] == [2, 1, 0, 3]


def test_hits_without_a_vector_stay_where_they_are() -> None:
    got = order([None, SAME, NEAR], [at(5), at(1), at(3)], 0.9)
    assert [p.index for p in got] == [0, 2, 1]


def test_vectors_and_times_must_pair_up() -> None:
    with pytest.raises(ValueError, match="one vector"):
        order([SAME], [], 0.9)


def test_a_revision_further_below_than_the_span_stays_there() -> None:
    vectors = [SAME, OTHER, OTHER, NEAR]
    told = [at(1), at(0), at(0), at(3)]
    assert [p.index for p in order(vectors, told, 0.9, span=2)] == [0, 1, 2, 3]
    assert [p.index for p in order(vectors, told, 0.9, span=3)] == [3, 0, 1, 2]


def test_speaker_of_reads_roles_in_either_case() -> None:
    assert speaker_of("user: I moved to Lisbon.") == "user"
    assert speaker_of("Caroline: hi there") == "caroline"
    assert speaker_of("no speaker here") is None
    assert speaker_of("http://example.org is down") is None


def test_a_revision_does_not_pull_its_own_later_neighbours_above_the_first() -> None:
    # A, then B (near A), then C (near B, far from A): B goes above A; C stays below A.
    a, b, c = [1.0, 0.0, 0.0], [0.8, 0.6, 0.0], [0.3, 0.95, 0.0]
    got = order([a, b, c], [at(1), at(2), at(3)], 0.75)
    assert [p.index for p in got] == [1, 0, 2]
    assert got[0].above == 0


def test_values_of_reads_numbers_as_written() -> None:
    text = "user: latency fell from 250ms to 180ms under 1,000 users; score 19/20 at 10:30, v2.6.0"
    assert values_of(text) == {"250", "180", "1,000", "19/20", "10:30", "2.6.0"}
    assert values_of("I moved to Lisbon.") == frozenset()


def test_a_revision_states_a_value_the_earlier_does_not() -> None:
    def said(*values: str) -> Told:
        return Told(T0, T0, values=frozenset(values))

    assert revises(said("120", "20"), said("180", "20"))
    assert not revises(said("20"), said("180", "20"))  # nothing new: a restatement
    assert not revises(said("120"), said())  # the earlier gave no value to change
    assert not revises(said(), said("180"))


def test_with_the_revision_signal_only_changed_values_are_moved() -> None:
    def told(days: int, *values: str) -> Told:
        return Told(T0 + timedelta(days=days), T0, values=frozenset(values))

    changed = [told(1, "180"), told(2), told(3, "120")]
    assert [p.index for p in order([SAME, OTHER, NEAR], changed, 0.9, revision=True)] == [2, 0, 1]
    same = [told(1, "180"), told(2), told(3, "180")]
    assert [p.index for p in order([SAME, OTHER, NEAR], same, 0.9, revision=True)] == [0, 1, 2]
    none = [told(1), told(2), told(3)]
    assert [p.index for p in order([SAME, OTHER, NEAR], none, 0.9, revision=True)] == [0, 1, 2]
    assert [p.index for p in order([SAME, OTHER, NEAR], none, 0.9)] == [2, 0, 1]
