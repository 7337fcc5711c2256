"""Every harness skips and counts malformed records instead of crashing (issue 11, finding 9).

The fixtures are small, hand-made and written here; no evaluation data is copied. Each file
mixes good records with the kinds of damage real files have: nulls, missing fields, wrong
types, dates the API refuses, blank lines, invalid UTF-8, lines that are not JSON objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from palimpsest_bench import temporal_data as t
from palimpsest_bench import yago_data as y
from palimpsest_bench.recall_data import load_locomo, load_scifact, load_timeqa
from palimpsest_bench.records import Skipped, read_jsonl

BAD_LINES = [b"\n", b"   \r\n", b"\xff\xfe not utf-8\n", b"{not json\n", b"[1, 2]\n", b"null\n"]


def write(path: Path, rows: list[Any]) -> Path:
    """Objects as JSON lines; bytes as they are (damaged lines)."""
    path.write_bytes(b"".join(r if isinstance(r, bytes) else orjson.dumps(r) + b"\n" for r in rows))
    return path


LINE_COUNTS = {
    "blank line": 2,
    "invalid UTF-8": 1,
    "invalid JSON": 1,
    "not a JSON object": 2,
}


def with_file(name: str, counts: dict[str, int]) -> dict[str, int]:
    return {f"{name}: {reason}": n for reason, n in counts.items()}


def test_lines_that_are_not_json_objects_are_counted(tmp_path: Path) -> None:
    path = write(tmp_path / "x.jsonl", [b"\xef\xbb\xbf" + orjson.dumps({"a": 1}) + b"\r\n"])
    with path.open("ab") as fh:
        fh.write(b"".join(BAD_LINES) + orjson.dumps({"b": 2}))  # no final newline
    skipped = Skipped()
    assert read_jsonl(path, skipped) == [{"a": 1}, {"b": 2}]
    assert skipped.as_dict() == with_file("x.jsonl", LINE_COUNTS)
    assert skipped.total == 6
    limited = Skipped()
    assert read_jsonl(path, limited, limit=1) == [{"a": 1}]
    assert limited.total == 0


def sqa(**changes: Any) -> dict[str, Any]:
    row = {
        "question_id": "q1",
        "question": "who leads",
        "timeline": 0,
        "answers": ["A"],
        "valid_at": "2010",
        "invalid_at": None,
    }
    row.update(changes)
    return {k: v for k, v in row.items() if v is not ...}


def test_a_null_answers_list_no_longer_crashes_the_plan() -> None:
    """The crash of the finding: TypeError: 'NoneType' object is not iterable."""
    plan = t.plan_situatedqa([sqa(answers=None), sqa(answers=["B"], valid_at="2015")])
    assert [p.draft.object_value for p in plan.facts] == ["B"]
    assert plan.malformed.as_dict() == {"facts.jsonl: answers: null": 1}


def test_situatedqa_skips_and_counts_malformed_facts_and_queries(tmp_path: Path) -> None:
    write(
        tmp_path / "facts.jsonl",
        [
            sqa(answers=["A"], valid_at="2010"),
            sqa(answers=["B"], valid_at="2015", timeline="0"),  # digits as text are fine
            sqa(answers=None),
            sqa(answers=...),
            sqa(answers="A"),
            sqa(answers=["A", 7]),
            sqa(question_id=None),
            sqa(question_id=True),
            sqa(question=" "),
            sqa(question=["who"]),
            sqa(timeline="first"),
            sqa(valid_at="2018-13"),
            sqa(valid_at=2018),
            sqa(invalid_at="soon"),
            sqa(question="q" * 400),  # assertFacts limits names to 300 characters
            *BAD_LINES,
        ],
    )
    query = {
        "question_id": "q1",
        "as_of": "2012",
        "as_of_granularity": "year",
        "date_type": "start",
        "gold_answers": ["A"],
    }
    write(
        tmp_path / "asof.jsonl",
        [
            query,
            {**query, "as_of": "2016-03-01", "as_of_granularity": None},
            {**query, "gold_answers": None},
            {**query, "as_of": "20x1"},
            {**query, "as_of": "2016-02-30", "as_of_granularity": "day"},
            {k: v for k, v in query.items() if k != "date_type"},
            {**query, "question_id": 1.5},
            b"\n",
        ],
    )
    plan, queries = t.read_situatedqa(tmp_path)
    assert [p.draft.object_value for p in plan.facts] == ["A", "B"]
    assert [(q.as_of, q.gold_answers) for q in queries] == [
        ("2012-07-01", ["A"]),
        ("2016-03-01", ["A"]),
    ]
    assert plan.malformed.as_dict() == {
        **with_file("facts.jsonl", LINE_COUNTS),
        "facts.jsonl: answers: missing": 1,
        "facts.jsonl: answers: not a list": 1,
        "facts.jsonl: answers: not a list of strings": 1,
        "facts.jsonl: answers: null": 1,
        "facts.jsonl: invalid_at: not a date": 1,
        "facts.jsonl: question: blank": 1,
        "facts.jsonl: question: not a string": 1,
        "facts.jsonl: question_id: not an id": 1,
        "facts.jsonl: question_id: null": 1,
        "facts.jsonl: refused by assertFacts": 1,
        "facts.jsonl: timeline: not an integer": 1,
        "facts.jsonl: valid_at: not a date": 1,
        "facts.jsonl: valid_at: not a string": 1,
        "asof.jsonl: as_of: not a date": 2,
        "asof.jsonl: blank line": 1,
        "asof.jsonl: date_type: missing": 1,
        "asof.jsonl: gold_answers: null": 1,
        "asof.jsonl: question_id: not an id": 1,
    }


YAGO_HEADER = "split\tsubject\trelation\tobject\tstart_year\tend_year\tend_open\n"


def test_yago11k_skips_and_counts_malformed_rows_and_probes(tmp_path: Path) -> None:
    rows = [
        "train\tAnn\tworksAt\tLab_A\t1980\t1989\tFalse\n",
        "train\tAnn\tworksAt\tLab_B\t1990\t\tTrue\n",
        "train\tAnn\tworksAt\n",  # too few columns
        "train\tAnn\tworksAt\tLab_C\t1990\t\tTrue\textra\n",  # too many
        "train\tAnn\tworksAt\tLab_D\tabc\t\tTrue\n",
        "train\tAnn\tworksAt\tLab_E\t1990\t19x0\tFalse\n",
        "train\t \tworksAt\tLab_F\t1990\t\tTrue\n",  # blank subject
        "train\tAnn\tworksAt\tLab_G\t99999\t\tTrue\n",  # a year the API refuses
        "train\tAnn\tworksAt\tLab_H\t1995\t1990\tFalse\n",  # ends before it starts
    ]
    (tmp_path / "facts.tsv").write_bytes(
        (YAGO_HEADER + "".join(rows)).encode() + b"\n" + b"train\t\xff\tx\ty\t1\t2\tFalse\n"
    )
    probe = {"subject": "Ann", "relation": "worksAt", "as_of_year": 1985, "gold_objects": []}
    write(
        tmp_path / "asof_probes.jsonl",
        [
            probe,
            {**probe, "as_of_year": "1991"},
            {**probe, "as_of_year": None},
            {**probe, "as_of_year": "soon"},
            {**probe, "as_of_year": 0},
            {**probe, "gold_objects": None},
            {k: v for k, v in probe.items() if k != "relation"},
            b'"just a string"\n',
        ],
    )
    drafts, unknown, probes, malformed = y.read_yago11k(tmp_path)
    assert [d.object.name for d in drafts if d.object] == ["Lab_A", "Lab_B"]
    assert unknown == set()
    assert [p.as_of for p in probes] == ["1985-07-01", "1991-07-01"]
    assert malformed.as_dict() == {
        "facts.tsv: blank line": 1,
        "facts.tsv: invalid UTF-8": 1,
        "facts.tsv: wrong number of columns": 2,
        "facts.tsv: start_year/end_year: not a year": 2,
        "facts.tsv: refused by assertFacts": 3,
        "asof_probes.jsonl: as_of_year: null": 1,
        "asof_probes.jsonl: as_of_year: not an integer": 1,
        "asof_probes.jsonl: as_of_year: out of range": 1,
        "asof_probes.jsonl: gold_objects: null": 1,
        "asof_probes.jsonl: relation: missing": 1,
        "asof_probes.jsonl: not a JSON object": 1,
    }


def test_locomo_skips_and_counts_malformed_turns_and_questions(tmp_path: Path) -> None:
    turn = {
        "sample_id": "s1",
        "session": 1,
        "session_date_time": "noon",
        "observed_at": "2020-01-02T12:00:00",
        "turn_index": 0,
        "dia_id": "D1:1",
        "speaker": "A",
        "text": "hello",
    }
    write(
        tmp_path / "turns.jsonl",
        [
            turn,
            {**turn, "turn_index": "1", "dia_id": "D1:2", "session_date_time": None},
            {**turn, "session": None},
            {**turn, "text": None},
            {**turn, "text": "   "},
            {**turn, "speaker": 3},
            {**turn, "observed_at": "yesterday"},
            {**turn, "dia_id": "D1\x1f3"},
            {**turn, "turn_index": 1.5},
            *BAD_LINES,
        ],
    )
    qa = {"sample_id": "s1", "qa_index": 0, "question": "q?", "category": 2, "evidence": ["D1:1"]}
    write(
        tmp_path / "qa.jsonl",
        [qa, {**qa, "evidence": None}, {**qa, "question": None}, {**qa, "category": [2]}],
    )
    ds = load_locomo(tmp_path)
    assert [d.units for d in ds.docs] == [(("D1:1", "A: hello"), ("D1:2", "A: hello"))]
    assert [q.id for q in ds.queries] == ["s1#0"]
    assert ds.malformed == {
        **with_file("turns.jsonl", LINE_COUNTS),
        "turns.jsonl: session: null": 1,
        "turns.jsonl: text: null": 1,
        "turns.jsonl: text: blank": 1,
        "turns.jsonl: speaker: not a string": 1,
        "turns.jsonl: observed_at: not a date": 1,
        "turns.jsonl: dia_id: not an id": 1,
        "turns.jsonl: turn_index: not an integer": 1,
        "qa.jsonl: evidence: null": 1,
        "qa.jsonl: question: null": 1,
        "qa.jsonl: category: not an id": 1,
    }


def test_scifact_skips_and_counts_malformed_abstracts_queries_and_qrels(tmp_path: Path) -> None:
    write(
        tmp_path / "corpus.jsonl",
        [
            {"_id": "7", "title": "T", "text": "abstract"},
            {"_id": 8, "title": None, "text": "untitled abstract"},
            {"_id": "9", "title": "only a title", "text": ""},
            {"_id": None, "title": "T", "text": "x"},
            {"_id": "10", "title": " ", "text": None},
            {"_id": "11", "title": 5, "text": "x"},
            b"[]\n",
        ],
    )
    write(
        tmp_path / "queries.jsonl",
        [{"_id": "1", "text": "claim"}, {"_id": "2", "text": None}, {"text": "no id"}, b"\xc3\n"],
    )
    (tmp_path / "qrels.tsv").write_bytes(
        b"query-id\tcorpus-id\tscore\n1\t7\t1\n1\t8\n1\t9\tx\n\n1\t\xff\t1\n1\t9\t1\n"
    )
    ds = load_scifact(tmp_path)
    assert [d.units for d in ds.docs] == [
        (("7", "abstract"),),
        (("8", "untitled abstract"),),
        (("9", "only a title"),),
    ]
    assert ds.queries[0].relevant == {"7", "9"}
    assert [q.id for q in ds.queries] == ["1"]
    assert ds.malformed == {
        "corpus.jsonl: _id: null": 1,
        "corpus.jsonl: text: blank": 1,
        "corpus.jsonl: title: not a string": 1,
        "corpus.jsonl: not a JSON object": 1,
        "queries.jsonl: text: null": 1,
        "queries.jsonl: _id: missing": 1,
        "queries.jsonl: invalid UTF-8": 1,
        "qrels.tsv: not 'query corpus score'": 2,
        "qrels.tsv: blank line": 1,
        "qrels.tsv: invalid UTF-8": 1,
    }


def test_timeqa_skips_and_counts_malformed_paragraphs_and_questions(tmp_path: Path) -> None:
    para = {"_id": "/wiki/P#0", "page": "/wiki/P", "para": 0, "text": "First."}
    write(
        tmp_path / "corpus.jsonl",
        [
            para,
            {**para, "_id": "/wiki/P#1", "para": 1, "text": "- a list, escaped"},
            {**para, "_id": "/wiki/P#2", "text": None},
            {**para, "_id": "/wiki/P#3", "text": " "},
            {**para, "_id": "/wiki/P#4", "para": "second"},
            {"_id": "/wiki/Q#0", "page": "/wiki/Q", "para": 0, "text": None},  # page left empty
            *BAD_LINES,
        ],
    )
    question = {"_id": "q0", "question": "who?", "relevant": ["/wiki/P#1"]}
    write(
        tmp_path / "queries.jsonl",
        [
            question,
            {**question, "_id": "q1", "relevant": []},  # nothing to find: not scored
            {**question, "relevant": None},
            {**question, "relevant": "/wiki/P#1"},
            {**question, "question": ""},
        ],
    )
    ds = load_timeqa(tmp_path)
    assert [(d.title, d.units) for d in ds.docs] == [
        ("/wiki/P", (("/wiki/P#0", "First."), ("/wiki/P#1", "\\- a list, escaped")))
    ]
    assert [q.id for q in ds.queries] == ["q0"]
    assert ds.malformed == {
        **with_file("corpus.jsonl", LINE_COUNTS),
        "corpus.jsonl: text: null": 2,
        "corpus.jsonl: text: blank": 1,
        "corpus.jsonl: para: not an integer": 1,
        "queries.jsonl: relevant: null": 1,
        "queries.jsonl: relevant: not a list": 1,
        "queries.jsonl: question: blank": 1,
    }


@pytest.mark.parametrize("loader", [load_locomo, load_scifact, load_timeqa])
def test_files_of_nothing_but_damage_load_as_empty(tmp_path: Path, loader: Any) -> None:
    for name in ("turns.jsonl", "qa.jsonl", "corpus.jsonl", "queries.jsonl", "qrels.tsv"):
        write(tmp_path / name, list(BAD_LINES))
    ds = loader(tmp_path)
    assert (ds.docs, ds.queries) == ([], [])
    assert sum(ds.malformed.values()) > 0
