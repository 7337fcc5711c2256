"""``eval context-floor``'s arithmetic: precision pooled over packed lines, recall per question,
and the unrelated questions' lines (every one noise)."""

from __future__ import annotations

from palimpsest_bench.context_floor import Tally, sample
from palimpsest_bench.recall_data import Dataset, Doc, Query


def test_precision_is_pooled_and_recall_is_per_question() -> None:
    t = Tally()
    t.add(["D1:1", "D1:2", "D1:3", "D1:1"], frozenset({"D1:1", "D2:9"}))
    t.add([], frozenset({"D1:5"}))
    t.add_unrelated(["D1:1", "D1:2"])
    t.add_unrelated([])
    assert t.summary() == {
        "precision": 0.5,  # 2 evidence lines of 4
        "recall": 0.25,  # (1/2 + 0) / 2: a turn packed twice counts once
        "any": 0.5,
        "lines": 2.0,
        "unrelated_lines": 1.0,
        "unrelated_empty": 0.5,
    }


def q(owner: str, i: int, category: str, relevant: frozenset[str]) -> Query:
    return Query(f"{owner}#{i}", owner, f"question {i}", relevant, category)


def test_the_sample_keeps_the_first_conversations_and_asks_each_in_the_next() -> None:
    docs = [Doc(o, o, None, (("D1:1", "x"),)) for o in ("c", "a", "b")]
    asked = [q(o, i, cat, frozenset({"D1:1"})) for o in "abc" for i, cat in enumerate("1251")]
    picked = sample(Dataset("locomo", docs, [*asked, q("a", 9, "1", frozenset())]), 2, 5, 2)
    assert {d.owner for d in picked.data.docs} == {"a", "b"}
    # Categories 1-4 with evidence, every second one: questions 0 and 3 of each.
    assert [x.id for x in picked.asked] == ["a#0", "a#3", "b#0", "b#3"]
    assert picked.elsewhere == {"a": "b", "b": "a"}
