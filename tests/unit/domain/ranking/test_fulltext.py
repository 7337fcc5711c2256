"""The scope-local full-text index, pure parts: analyzer, representation, statistics, BM25
and the MaxScore plan (checked against scoring every row)."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Mapping

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.domain.ranking import fulltext as ft
from palimpsest.domain.ranking.fulltext import KindStats, StatsDelta, Stored

KEY = "0123456789abcdef0123456789abcdef"
WORDS = st.sampled_from(["ab", "abc", "b", "bc", "c", "cat", "dog", "x1"])


def test_analyzer_stems_drops_stop_words_and_possessives() -> None:
    assert ft.analyze("Caroline's adoption agencies, and the Researching!") == [
        "carolin",
        "adopt",
        "agenc",
        "research",
    ]
    assert ft.analyze("don't  x_y 2023") == ["dont", "x", "y", "2023"]


def test_analyzer_drops_runs_too_long_to_be_words() -> None:
    blob = "Zm" * 5_000  # a pasted base64 blob: as a term it overflowed the range index
    assert ft.analyze(f"hash {blob} kept") == ["hash", "kept"]
    edge = "a" * ft.MAX_TERM_CHARS
    assert ft.analyze(f"{edge} {edge}b") == [ft.analyze(edge)[0]]
    assert ft.query_terms(f"where is {blob}", drop_question_words=True) == []


def test_question_words_leave_the_full_text_query_only_when_asked() -> None:
    assert ft.query_terms("When did Caroline go to the support group?", True) == [
        "carolin",
        "go",
        "support",
        "group",
    ]
    with_them = ft.query_terms("When did Caroline go?", False)
    assert with_them[:2] == ["when", "did"]
    assert ft.query_terms("the the cat cat", True) == ["cat"]  # distinct terms


def test_neighbourhood_is_own_twice_plus_previous_and_next() -> None:
    texts = ["alpha one", "beta two", "gamma three"]
    reps = ft.sequence_bags(texts, on=True)
    assert reps[1] == Counter({"beta": 2, "two": 2, "alpha": 1, "one": 1, "gamma": 1, "three": 1})
    # The last chunk has no next one yet: its own text a third time (a streaming turn).
    assert reps[2] == Counter({"gamma": 3, "three": 3, "beta": 1, "two": 1})
    assert reps[0] == Counter({"alpha": 2, "one": 2, "beta": 1, "two": 1})
    assert ft.sequence_bags(texts, on=False)[1] == Counter({"beta": 1, "two": 1})


def test_the_neighbourhood_is_for_short_chunks_only() -> None:
    long = "delta " * 5 + "epsilon zeta"  # 7 terms
    texts = ["alpha one", long, "gamma three", "eta theta"]
    reps = ft.sequence_bags(texts, True, None, 4)
    # A longer chunk is its own text alone, as with the lever off.
    assert reps[1] == ft.bag(long)
    # A short chunk leaves a longer neighbour out: the previous one as if it were the first,
    # the next one as if it were the last (its own text a third time).
    assert reps[0] == Counter({"alpha": 3, "one": 3})
    assert reps[2] == Counter({"gamma": 2, "three": 2, "eta": 1, "theta": 1})
    # At the limit a chunk still counts as short; 0 means no limit.
    assert ft.sequence_bags(texts, True, None, 7)[0] == ft.sequence_bags(texts, True)[0]
    assert ft.sequence_bags(texts, True, None, 0) == ft.sequence_bags(texts, True)
    # Off stays off whatever the limit.
    assert ft.sequence_bags(texts, False, None, 4)[0] == ft.bag("alpha one")


def test_appending_a_turn_swaps_the_third_copy_for_the_new_turn() -> None:
    before = ft.sequence_bags(["x said hello", "y said bye"], on=True)
    after = ft.sequence_bags(["x said hello", "y said bye", "z waved"], on=True)
    assert before[0] == after[0]
    assert after[1] == before[1] - ft.bag("y said bye") + ft.bag("z waved")


def test_stored_representation_round_trips() -> None:
    rep = ft.bag("the cat sat on the cat mat")
    stored = Stored.of(rep)
    assert stored.ft == "cat mat sat"
    assert stored.tf == [2, 1, 1]
    assert stored.length == 4
    assert ft.stored_bag(stored.ft, stored.tf) == rep
    assert ft.stored_bag(None, None) == Counter()


def test_stats_delta_counts_rows_lengths_and_document_frequencies() -> None:
    delta = StatsDelta()
    delta.add(ft.bag("cat cat dog"), speaker="ann")
    delta.add(ft.bag("dog"))
    delta.replace(ft.bag("dog"), ft.bag("bird"))
    changes = {(c["kind"], c["term"]): (c["df"], c["len"]) for c in delta.changes("chunk")}
    assert changes[("chunk", "")] == (2, 4)
    assert changes[("chunk", "cat")] == (1, 0)
    assert changes[("chunk", "dog")] == (1, 0)
    assert changes[("chunk", "bird")] == (1, 0)
    assert changes[("speaker", "ann")] == (1, 0)
    removed = StatsDelta()
    removed.add(ft.bag("cat"), -1)
    assert {(c["term"], c["df"]) for c in removed.changes("memory")} == {("", -1), ("cat", -1)}
    keys = [(c["kind"], c["term"]) for c in delta.changes("chunk")]
    assert keys == sorted(keys)  # one lock order for every writer


def test_stats_delta_keeps_the_peaks_of_the_rows_written() -> None:
    delta = StatsDelta()
    delta.add(ft.bag("cat cat dog"))
    delta.add(ft.bag("cat dog dog dog dog bird"))
    delta.add(ft.bag("cat cat cat cat cat cat cat"), -1)  # a row removed leaves no peak
    peaks = {c["term"]: (c["max_tf"], c["max_ratio"]) for c in delta.changes("chunk")}
    assert peaks["cat"] == (2, 2 / 3)
    assert peaks["dog"] == (4, 4 / 6)
    assert peaks["bird"] == (1, 1 / 6)
    assert peaks[""] == (0, 0.0)
    # A row rewritten with its terms unchanged changes no count; its peaks above the replaced
    # row's are kept ("cat"), and a term no higher than before needs no change ("dog").
    edited = StatsDelta()
    edited.replace(ft.bag("cat dog"), ft.bag("cat cat cat dog"))
    assert {c["term"]: (c["df"], c["max_tf"]) for c in edited.changes("chunk")} == {
        "": (0, 0),
        "cat": (0, 3),
    }


@settings(max_examples=300)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.dictionaries(WORDS, st.integers(1, 9)), st.booleans()),
        max_size=30,
    )
)
def test_the_peaks_kept_bound_every_row_through_writes_rewrites_and_deletes(
    ops: list[tuple[int, dict[str, int], bool]],
) -> None:
    rows: dict[int, Counter[str]] = {}
    kept: dict[str, tuple[int, float]] = {}  # what the statistics keep: the largest seen
    for slot, words, by_replace in ops:
        old, new = rows.pop(slot, None), Counter(words)
        delta = StatsDelta()
        if not new:
            if old:
                delta.add(old, -1)  # the row deleted
        elif old is None:
            delta.add(new)
        elif by_replace:
            delta.replace(old, new)  # a chunk's representation rewritten
        else:
            delta.add(old, -1)  # a note rewritten (term_index.replaced)
            delta.add(new, 1, since=old)
        if new:
            rows[slot] = new
        for c in delta.changes("memory"):
            max_tf, max_ratio = c["max_tf"], c["max_ratio"]
            assert isinstance(max_tf, int)
            assert isinstance(max_ratio, float)
            tf, ratio = kept.get(str(c["term"]), (0, 0.0))
            kept[str(c["term"])] = (max(tf, max_tf), max(ratio, max_ratio))
    for row in rows.values():
        for term, n in row.items():
            assert kept[term][0] >= n
            assert kept[term][1] >= n / sum(row.values())


@settings(max_examples=300)
@given(
    st.lists(st.dictionaries(WORDS, st.integers(1, 9), min_size=1), min_size=1, max_size=12),
    st.floats(0.0, 3.0),
    st.floats(0.0, 1.0),
    st.booleans(),
)
def test_no_row_gets_more_from_a_term_than_its_bound(
    rows: list[dict[str, int]], k1: float, b: float, peaks: bool
) -> None:
    delta = StatsDelta()
    for r in rows:
        delta.add(Counter(r))
    stats = corpus_stats({str(i): Counter(r) for i, r in enumerate(rows)})
    if peaks:
        stats = KindStats(stats.rows, stats.length, stats.df, delta.peaks)
    for term in stats.df:
        bound = ft.upper_bound(term, stats, k1, b)
        loose = ft.idf(stats.rows, stats.df[term]) * (k1 + 1.0)
        assert bound <= loose * (1.0 + 1e-9)  # never looser than the bound without peaks
        for r in rows:
            stored = Stored.of(Counter(r))
            assert bm25({term: r.get(term, 0)}, stored.length, stats, k1, b) <= bound
        if peaks and len(rows) == 1:
            # One row: its own contribution is the bound (the tightest there is).
            only = Stored.of(Counter(rows[0]))
            assert bm25({term: rows[0][term]}, only.length, stats, k1, b) == pytest.approx(bound)


def bm25(tf: Mapping[str, int], length: int, stats: KindStats, k1: float, b: float) -> float:
    """The textbook formula, term by term in term order: the oracle ``Scorer`` must match."""
    norm = k1 * (1.0 - b + b * length / stats.avg_length)
    total = 0.0
    for term in sorted(tf):
        n, df = tf[term], stats.df.get(term, 0)
        if n > 0 and df > 0:
            total += ft.idf(stats.rows, df) * n * (k1 + 1.0) / (n + norm)
    return total


def frequencies(stored: str | None, tf: list[int] | None, terms: list[str]) -> dict[str, int]:
    """The query terms' frequencies by splitting the stored text (what ``Scorer`` avoids)."""
    held = dict(zip((stored or "").split(), tf or [], strict=True))
    return {t: held[t] for t in terms if t in held}


def test_bm25_matches_the_formula() -> None:
    stats = KindStats(rows=10, length=100, df={"cat": 2})
    idf = ft.idf(10, 2)
    assert idf == pytest.approx(1.4816045, rel=1e-6)  # ln(1 + 8.5 / 2.5)
    expected = idf * 3 * 2.2 / (3 + 1.2 * (0.25 + 0.75 * 20 / 10))
    assert bm25({"cat": 3}, 20, stats, 1.2, 0.75) == pytest.approx(expected)
    assert bm25({"dog": 3}, 20, stats, 1.2, 0.75) == 0.0
    scorer = ft.Scorer.of(["cat", "dog"], stats, 1.2, 0.75)
    assert scorer.score("cat mouse", [3, 1], 20) == pytest.approx(expected)


@given(
    st.lists(st.dictionaries(WORDS, st.integers(1, 9), min_size=1), min_size=1, max_size=8),
    st.lists(WORDS, min_size=1, max_size=5),
    st.floats(0.0, 3.0),
    st.floats(0.0, 1.0),
)
def test_the_scorer_gives_exactly_the_floats_of_bm25(
    rows: list[dict[str, int]], terms: list[str], k1: float, b: float
) -> None:
    stats = corpus_stats({str(i): Counter(r) for i, r in enumerate(rows)})
    scorer = ft.Scorer.of(terms, stats, k1, b)
    for r in rows:
        stored = Stored.of(Counter(r))
        expected = bm25(frequencies(stored.ft, stored.tf, terms), stored.length, stats, k1, b)
        assert scorer.score(stored.ft, stored.tf, stored.length) == expected  # not approx
    assert scorer.score("", [], 3) == scorer.score(None, None, 3) == 0.0


def corpus_stats(rows: dict[str, Counter[str]]) -> KindStats:
    df: Counter[str] = Counter()
    for r in rows.values():
        df.update(set(r))
    return KindStats(len(rows), sum(sum(r.values()) for r in rows.values()), dict(df))


def test_lucene_terms_carry_the_scope_and_only_analyzed_words() -> None:
    q = ft.lucene_terms(KEY, ["cat", "dog"])
    assert q == f'scope_key:"{KEY}" AND (ft:"cat" OR ft:"dog")'
    with pytest.raises(ValueError, match="hex"):
        ft.lucene_terms('x" OR "y', ["cat"])
    with pytest.raises(ValueError, match="analyzed"):
        ft.lucene_terms(KEY, ['cat" OR *:*'])


@given(st.text(max_size=200))
def test_query_terms_never_carry_lucene_syntax(text: str) -> None:
    terms = ft.query_terms(text, True)
    if terms:
        q = ft.lucene_terms(KEY, terms)
        assert q.count("scope_key:") == 1
        assert all(t.isalnum() for t in terms)


def test_the_scorer_finds_terms_whole_in_the_stored_text() -> None:
    stored, tf = "ab abc b bc c", [1, 2, 3, 4, 5]
    stats = KindStats(10, 100, dict.fromkeys(["a", "ab", "abc", "b", "bc", "bcd", "c", "x"], 2))

    def score(terms: list[str]) -> float:
        return ft.Scorer.of(terms, stats, 1.2, 0.75).score(stored, tf, 15)

    # first, middle and last terms; a term that is a prefix or a suffix of another is
    # matched whole only; absent terms add nothing.
    assert score(["ab", "b", "c"]) == bm25({"ab": 1, "b": 3, "c": 5}, 15, stats, 1.2, 0.75)
    assert score(["abc", "bc"]) == bm25({"abc": 2, "bc": 4}, 15, stats, 1.2, 0.75)
    assert score(["a", "bcd", "x"]) == 0.0


def minimal_sets_by_brute_force(bounds: dict[str, float], threshold: float) -> list[list[str]]:
    out = []
    for n in range(1, len(bounds) + 1):
        for combo in itertools.combinations(sorted(bounds), n):
            total = sum(bounds[t] for t in combo)
            if total >= threshold and all(total - bounds[t] < threshold for t in combo):
                out.append(list(combo))
    return out


@given(st.integers(min_value=0, max_value=100_000))
def test_covering_sets_are_the_minimal_sets_whose_bounds_reach_the_threshold(seed: int) -> None:
    rng = random.Random(seed)
    rows = rng.randint(10, 10_000)
    df = {f"t{i}": rng.randint(1, rows) for i in range(rng.randint(1, ft.MAX_COVER_TERMS))}
    stats = KindStats(rows, rows * 10, df)
    bounds = {t: ft.upper_bound(t, stats, 1.2, 0.75) for t in df}
    # A threshold some set of terms reaches exactly (the edge), or one in between.
    some = rng.sample(sorted(df), rng.randint(1, len(df)))
    threshold = sum(bounds[t] for t in some) * rng.choice([1.0, rng.uniform(0.2, 1.2)])
    found = ft.covering_sets(df, stats, 1.2, 0.75, threshold)
    expected = minimal_sets_by_brute_force(bounds, threshold * (1.0 - 1e-9))
    if len(expected) > ft.MAX_COVER_SETS:
        assert found is None
    else:
        assert found is not None
        assert sorted(found) == sorted(expected)


def test_covering_sets_give_up_past_their_size() -> None:
    df = {f"t{i}": 5 for i in range(ft.MAX_COVER_TERMS + 1)}
    assert ft.covering_sets(df, KindStats(100, 1000, df), 1.2, 0.75, 1.0) is None


def test_lucene_sets_carry_the_scope_and_only_analyzed_words() -> None:
    q = ft.lucene_sets(KEY, [["cat", "dog"], ["eel"]], ["cat", "dog", "eel"])
    assert q == (
        f'scope_key:"{KEY}" AND ((ft:"cat" AND ft:"dog") OR (ft:"eel"))'
        ' AND NOT (ft:"cat" AND ft:"dog" AND ft:"eel")'
    )
    assert ft.lucene_sets(KEY, [["cat"]]) == f'scope_key:"{KEY}" AND ((ft:"cat"))'
    with pytest.raises(ValueError, match="hex"):
        ft.lucene_sets('x" OR "y', [["cat"]])
    bad_sets: list[list[list[str]]] = [[], [[]], [["cat"], ['dog" OR *:*']]]
    for bad in bad_sets:
        with pytest.raises(ValueError, match="analyzed"):
            ft.lucene_sets(KEY, bad)
    with pytest.raises(ValueError, match="analyzed"):
        ft.lucene_sets(KEY, [["cat"]], ["dog) OR (*:*"])
