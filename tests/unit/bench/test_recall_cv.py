"""``eval locomo --cv``: re-ranking captured candidates, and the leave-one-out selection."""

from __future__ import annotations

import numpy as np
import pytest

from palimpsest.resolvers.recall.forms import Form
from palimpsest_bench.recall_cv import Candidates, metrics, ranked, scores, table
from palimpsest_bench.recall_cv_select import (
    Setting,
    consensus,
    distances,
    folds,
    nested,
    select,
    stability,
)

BASE: Setting = {
    "fulltext_weight": 1.0,
    "date_boost": 1.5,
    "when_boost": 1.3,
    "year_boost": 1.3,
    "time_boost": 1.5,
    "time_when_boost": 1.0,
    "speaker_boost": 1.1,
    "absent_at_depth": True,
}


def _cands() -> Candidates:
    # Row 0: vector rank 1, full-text beyond; row 1: full-text rank 1, vector beyond;
    # row 2: both rank 2 (relevant); row 3: full-text rank 3 only, a date match.
    zero = np.zeros(4)
    return Candidates(
        vector=np.array([1.0, 0.0, 2.0, 0.0]),
        fulltext=np.array([0.0, 1.0, 2.0, 3.0]),
        beyond_vector=np.array([False, True, False, True]),
        beyond_fulltext=np.array([True, False, False, False]),
        flags={
            "date_boost": np.array([0.0, 0.0, 0.0, 1.0]),
            "when_boost": zero,
            "year_boost": zero,
            "speaker_boost": zero,
            "time_boost": np.array([0.0, 0.5, 0.0, 0.0]),
            "time_when_boost": zero,
        },
        relevant=np.array([False, False, True, False]),
        gold=1,
        units=("a", "b", "c", "d"),
    )


def test_scores_are_the_resolvers_rrf_sum_and_boosts() -> None:
    got = scores(_cands(), BASE, 60, 20)
    beyond = 1 / 81
    assert got[0] == pytest.approx(1 / 61 + beyond)
    assert got[1] == pytest.approx((beyond + 1 / 61) * 1.25)  # timeRange graded 0.5 of 1.5
    assert got[2] == pytest.approx(2 / 62)
    assert got[3] == pytest.approx((beyond + 1 / 63) * 1.5)
    off = scores(_cands(), {**BASE, "absent_at_depth": False, "fulltext_weight": 2.0}, 60, 20)
    assert off[0] == pytest.approx(1 / 61)
    assert off[3] == pytest.approx(2 / 63 * 1.5)


def test_ties_keep_the_first_seen_order() -> None:
    tie = {**BASE, "time_boost": 1.0, "date_boost": 1.0}
    assert ranked(_cands(), tie, 60, 20)[:2] == [2, 0]  # rows 0 and 1 tie: 0 first
    assert metrics(_cands(), tie, 60, 20) == (1.0, 1.0)


def _figures() -> np.ndarray:
    """[setting, question, (recall@10, nDCG@10)]: setting 0 is the defaults; setting 1 is
    best for form "when" in every conversation; setting 2 is best for "who" only in conv a,
    so choosing on a alone would not hold."""
    owners = ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    forms = [Form.WHEN, Form.WHEN, Form.WHO, Form.WHO] * 3
    f = np.full((3, 12, 2), 0.5)
    for i, form in enumerate(forms):
        if form is Form.WHEN:
            f[1, i] = (1.0, 0.9)
        if form is Form.WHO:
            f[2, i] = (1.0, 1.0) if owners[i] == "a" else (0.0, 0.0)
    return f


def test_select_picks_the_best_setting_or_keeps_the_defaults() -> None:
    f = _figures()
    assert select(f, [0, 1, 4, 5], 0, 2, 0.01) == 1
    assert select(f, [0, 1, 4, 5], 0, 5, 0.01) == 0  # too few questions
    assert select(f, [0, 1, 4, 5], 0, 2, 1.0) == 0  # gain below the margin
    assert select(f, [2, 3], 0, 2, 0.01) == 2  # "who" in conv a alone


def test_folds_choose_on_the_other_conversations_and_score_the_held_out_one() -> None:
    owners = ["a"] * 4 + ["b"] * 4 + ["c"] * 4
    forms = [Form.WHEN, Form.WHEN, Form.WHO, Form.WHO] * 3
    settings: list[Setting] = [BASE, {**BASE, "when_boost": 1.6}, {**BASE, "date_boost": 2.0}]
    rows = folds(forms, owners, _figures(), settings, 0, min_support=2, min_gain=0.01)
    assert [r["held_out"] for r in rows] == ["a", "b", "c"]
    for r in rows:
        assert r["chosen_index"]["when"] == 1
        assert r["chosen"]["when"] == {"when_boost": 1.6}
    # Holding a out, "who" is chosen on b and c: setting 2 loses there, so the defaults.
    assert rows[0]["chosen_index"]["who"] == 0
    # Holding b out, a and c average 0.5 for setting 2: no gain, the defaults.
    assert rows[1]["chosen_index"]["who"] == 0
    a = rows[0]
    assert a["per_form"] == {"recall@10": 0.75, "ndcg@10": 0.7}
    assert a["defaults"] == {"recall@10": 0.5, "ndcg@10": 0.5}
    st = stability(rows)
    assert st["levers"]["when"]["when_boost"] == {"values": [1.6, 1.6, 1.6], "stable": False}
    assert st["folds_gained"] == {"recall@10": 3, "ndcg@10": 3}


def test_table_scores_every_setting_as_metrics_does() -> None:
    settings: list[Setting] = [
        BASE,
        {**BASE, "absent_at_depth": False, "fulltext_weight": 2.0},
        {**BASE, "time_boost": 1.0, "date_boost": 1.0},
        {**BASE, "date_boost": 3.0, "time_boost": 2.0},
    ]
    c = _cands()
    got = table([c, c], settings, 60, 20)
    for j, s in enumerate(settings):
        assert tuple(got[j, 0]) == pytest.approx(metrics(c, s, 60, 20))
        assert tuple(got[j, 1]) == pytest.approx(metrics(c, s, 60, 20))


def test_consensus_keeps_only_the_levers_chosen_alike_in_four_folds() -> None:
    settings: list[Setting] = [
        BASE,
        {**BASE, "when_boost": 1.6},
        {**BASE, "date_boost": 2.0},
        {**BASE, "when_boost": 1.6, "date_boost": 2.0},
    ]
    when, who = {"when_boost": 1.6}, {"date_boost": 2.0}
    rows = [{"chosen": {"when": when, "who": who if i < 3 else {}, "why": {}}} for i in range(5)]
    assert consensus(rows, settings, 0) == {Form.WHEN: 1}  # "who" held in 3 of 5 only
    rows[3]["chosen"]["who"] = who
    assert consensus(rows, settings, 0) == {Form.WHEN: 1, Form.WHO: 2}


def test_nested_chooses_the_consensus_without_the_held_out_conversation() -> None:
    owners = ["a"] * 4 + ["b"] * 4 + ["c"] * 4 + ["d"] * 4 + ["e"] * 4
    forms = [Form.WHEN, Form.WHEN, Form.WHO, Form.WHO] * 5
    f = np.full((2, 20, 2), 0.5)
    for i, form in enumerate(forms):
        if form is Form.WHEN and owners[i] != "e":
            f[1, i] = (1.0, 1.0)  # setting 1 wins for "when" everywhere but in e
    settings: list[Setting] = [BASE, {**BASE, "when_boost": 1.6}]
    rows = {r["held_out"]: r for r in nested(forms, owners, f, settings, 0, 2, 0.01)}
    assert rows["a"]["table"] == {"when": {"when_boost": 1.6}}
    assert rows["a"]["figures"] == [0.75, 0.75]
    assert rows["e"]["figures"] == [0.5, 0.5]  # chosen on a-d, it does not hold on e


def test_select_breaks_ties_towards_the_fewest_changed_levers() -> None:
    settings: list[Setting] = [
        BASE,
        {**BASE, "year_boost": 1.0, "when_boost": 1.6},  # year changes nothing here
        {**BASE, "when_boost": 1.6},
    ]
    f = np.full((3, 4, 2), 0.5)
    f[1:, :, :] = 1.0  # settings 1 and 2 tie
    assert select(f, [0, 1, 2, 3], 0, 2, 0.01) == 1  # without distances: the lowest index
    assert select(f, [0, 1, 2, 3], 0, 2, 0.01, distances(settings, 0)) == 2
