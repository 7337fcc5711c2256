"""``eval beam``'s loader on small synthetic files: the mapping, and bad input skipped and
counted, never fatal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from palimpsest_bench.beam_data import first_conversations, load_beam


def _msg(conv: str, mid: Any, role: str = "user", text: str = "hello", **kw: Any) -> bytes:
    rec = {"conversation": conv, "batch": 1, "id": mid, "role": role, "time_anchor": None}
    rec |= {"text": text, **kw}
    return orjson.dumps(rec)


def _q(conv: str, kind: str, index: int, evidence: Any, parts: Any = None) -> bytes:
    rec = {"conversation": conv, "type": kind, "index": index, "question": "which port?"}
    rec |= {"evidence": evidence, "evidence_parts": parts, "answer": "x"}
    return orjson.dumps(rec)


def _write(tmp: Path, messages: list[bytes], questions: list[bytes | str]) -> Path:
    (tmp / "messages.jsonl").write_bytes(b"\n".join(messages) + b"\n")
    lines = [q if isinstance(q, bytes) else q.encode() for q in questions]
    (tmp / "questions.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    return tmp


def test_messages_become_one_document_per_batch_and_anchor(tmp_path: Path) -> None:
    data = _write(
        tmp_path,
        [
            _msg("c1", 0, text="The server\n\nlistens on   3000", time_anchor="2024-01-05"),
            _msg("c1", 1, role="assistant", text="Noted.", time_anchor="2024-01-05"),
            _msg("c1", 2, text="Now 4000.", batch=2, time_anchor="2024-02-01"),
            _msg("c2", 0, text="Other talk."),
        ],
        [_q("c1", "knowledge_update", 0, [0, 2], {"original_info": [0], "updated_info": [2]})],
    )
    beam = load_beam(data)
    docs = beam.dataset.docs
    assert [(d.owner, d.observed_at, [u for u, _ in d.units]) for d in docs] == [
        ("c1", "2024-01-05", ["c1:0", "c1:1"]),
        ("c1", "2024-02-01", ["c1:2"]),
        ("c2", None, ["c2:0"]),
    ]
    assert docs[0].units[0][1] == "user: The server listens on 3000"
    assert docs[0].units[1][1] == "assistant: Noted."
    (q,) = beam.dataset.queries
    assert q.owner == "c1"
    assert q.category == "knowledge_update"
    assert q.relevant == {"c1:0", "c1:2"}
    # Asked the day after the conversation's latest anchor.
    assert q.asked_at == "2024-02-02T00:00:00Z"
    assert beam.parts[q.id] == {"original_info": {"c1:0"}, "updated_info": {"c1:2"}}
    assert beam.skipped == {}


def test_bad_messages_are_skipped_and_counted(tmp_path: Path) -> None:
    data = _write(
        tmp_path,
        [
            _msg("c1", 0),
            _msg("c1", None),  # no id
            orjson.dumps({"conversation": "c1", "batch": 1, "role": "user", "text": "x"}),
            _msg("c1", 3, text="   "),  # empty message
            _msg("c1", 4, text=None),  # type: ignore[arg-type]
            _msg("c1", 0, text="again"),  # the id seen before
            _msg("c1", 6, time_anchor="someday"),
            _msg(None, 7),  # type: ignore[arg-type]
            b"not json",
            b"[1, 2]",
        ],
        [_q("c1", "information_extraction", 0, [0])],
    )
    beam = load_beam(data)
    assert [u for d in beam.dataset.docs for u, _ in d.units] == ["c1:0"]
    assert beam.skipped == {
        "messages.jsonl: conversation: null": 1,
        "messages.jsonl: id: missing": 1,
        "messages.jsonl: id: null": 1,
        "messages.jsonl: id: repeated in its conversation": 1,
        "messages.jsonl: invalid JSON": 1,
        "messages.jsonl: not a JSON object": 1,
        "messages.jsonl: text: blank": 1,
        "messages.jsonl: text: null": 1,
        "messages.jsonl: time_anchor: not a date": 1,
    }
    assert len(beam.dataset.queries) == 1


def test_questions_as_python_literals_are_read_without_eval(tmp_path: Path) -> None:
    data = _write(
        tmp_path,
        [_msg("c1", 0), _msg("c1", 1, role="assistant"), _msg("c1", 2)],
        [
            # A whole line as a Python dict, bare and as a JSON string.
            "{'conversation': 'c1', 'type': 'event_ordering', 'index': 0, "
            "'question': 'order?', 'evidence': [0, 2], 'evidence_parts': None}",
            orjson.dumps(
                "{'conversation': 'c1', 'type': 'summarization', 'index': 1, "
                "'question': 'sum?', 'evidence': (1,), 'evidence_parts': None}"
            ),
            # Fields as literals.
            _q(
                "c1", "knowledge_update", 2, "[0, 1]", "{'original_info': [0], 'updated_info': [1]}"
            ),
            # Never evaluated: a call is not a literal.
            _q("c1", "information_extraction", 3, "__import__('os').getcwd()"),
            "{'conversation': 'c1', 'type': __import__('os').name}",
        ],
    )
    beam = load_beam(data)
    got = {q.category: q.relevant for q in beam.dataset.queries}
    assert got == {
        "event_ordering": {"c1:0", "c1:2"},
        "summarization": {"c1:1"},
        "knowledge_update": {"c1:0", "c1:1"},
    }
    ku = next(q for q in beam.dataset.queries if q.category == "knowledge_update")
    assert beam.parts[ku.id] == {"original_info": {"c1:0"}, "updated_info": {"c1:1"}}
    assert beam.skipped == {
        "questions.jsonl: evidence: not a literal": 1,
        "questions.jsonl: neither JSON nor a Python literal": 1,
    }


def test_evidence_naming_no_message_and_abstention(tmp_path: Path) -> None:
    data = _write(
        tmp_path,
        [_msg("c1", 0), _msg("c2", 0)],
        [
            _q("c1", "multi_session_reasoning", 0, [0, 99]),  # 99 names no message: dropped
            _q("c1", "temporal_reasoning", 1, [98]),  # nothing left: skipped
            _q("c2", "abstention", 0, []),  # counted, not asked
            _q("c1", "information_extraction", 2, None),
            _q("c1", "information_extraction", 3, [True]),
            _q("c1", "multi_session_reasoning", 0, [0]),  # the same question again
        ],
    )
    beam = load_beam(data)
    (q,) = beam.dataset.queries
    assert q.relevant == {"c1:0"}
    assert beam.unscored == [("c2", "abstention")]
    assert beam.evidence_dropped == 2
    assert beam.skipped == {
        "questions.jsonl: evidence id names no message": 2,
        "questions.jsonl: evidence: names no message": 1,
        "questions.jsonl: evidence: not a list of ids": 1,
        "questions.jsonl: evidence: null": 1,
        "questions.jsonl: question: repeated": 1,
    }


def test_first_conversations_keeps_their_questions_only(tmp_path: Path) -> None:
    data = _write(
        tmp_path,
        [_msg("c1", 0), _msg("c2", 0)],
        [_q("c1", "x", 0, [0]), _q("c2", "x", 0, [0]), _q("c2", "abstention", 1, [])],
    )
    beam = first_conversations(load_beam(data), 1)
    assert {d.owner for d in beam.dataset.docs} == {"c1"}
    assert [q.owner for q in beam.dataset.queries] == ["c1"]
    assert list(beam.parts) == [beam.dataset.queries[0].id]
    assert beam.unscored == []
