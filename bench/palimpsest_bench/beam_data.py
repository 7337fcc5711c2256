"""BEAM's dataset files into documents and questions (pure; ``eval beam``).

The mapping (``../shared/eval/README.md``): one user per ``conversation``; each message one
turn, the one-paragraph line ``"<role>: <text>"``; the messages of one ``batch`` (they share
one ``time_anchor``) form one document observed at that anchor. Unit ids are
``"<conversation>:<id>"``: message ids restart at 0 in every conversation. A question with
evidence is one search of its conversation, asked a day after the conversation's latest anchor;
a question without evidence (BEAM's abstention) is counted, not asked.

Real files are not clean. A message with a null or missing field, blank text, no id, an id
seen before in its conversation or an anchor that is not a date is skipped; an evidence id that
names no message is dropped, and a question left without any is skipped; a question line (or
its ``evidence`` / ``evidence_parts``) given as a string of Python literals is read with
``ast.literal_eval``, never ``eval``. Each is counted under ``"<file>: <reason>"`` and nothing
is fatal.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import orjson

from palimpsest_bench.recall_data import Dataset, Doc, Query, one_block
from palimpsest_bench.records import (
    Malformed,
    Skipped,
    convert,
    ident,
    integer,
    optional_text,
    read_lines,
    text_field,
    wire_date,
)

MESSAGES = "messages.jsonl"
QUESTIONS = "questions.jsonl"
# A Python literal longer than this is not read (literal_eval's parser is recursive).
MAX_LITERAL_CHARS = 1_000_000


@dataclass(frozen=True, slots=True)
class Message:
    conversation: str
    batch: int
    id: str  # the unit id, "<conversation>:<id>"
    line: str
    anchor: str | None


@dataclass(frozen=True, slots=True)
class Question:
    conversation: str
    type: str
    index: int
    text: str
    evidence: tuple[str, ...]  # the message ids as given (before the unit prefix)
    parts: Mapping[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Beam:
    """The questions with evidence as a ``Dataset`` (``category`` = BEAM's type), their
    labelled evidence parts by query id (unit ids), and the questions that are not asked."""

    dataset: Dataset
    parts: dict[str, dict[str, frozenset[str]]] = field(default_factory=dict)
    unscored: list[tuple[str, str]] = field(default_factory=list)  # no evidence: (owner, type)
    evidence_dropped: int = 0  # evidence ids that named no message

    @property
    def skipped(self) -> dict[str, int]:
        return self.dataset.malformed


def unit_id(conversation: str, message: str) -> str:
    return f"{conversation}:{message}"


# -- records (each raises Malformed) -----------------------------------------------------


def _message(m: dict[str, Any]) -> Message:
    conversation = ident(m, "conversation")
    anchor = optional_text(m, "time_anchor")
    return Message(
        conversation=conversation,
        batch=integer(m, "batch", default=0),
        id=unit_id(conversation, ident(m, "id")),
        line=_line(text_field(m, "role"), text_field(m, "text")),
        anchor=wire_date(anchor.strip(), "time_anchor") if anchor and anchor.strip() else None,
    )


def _line(role: str, text: str) -> str:
    try:
        return one_block(f"{role.strip()}: {text}")
    except ValueError as e:
        raise Malformed("text: not one paragraph") from e


def _literal(value: Any, name: str) -> Any:
    """``value``, or the Python literal a string holds (never ``eval``)."""
    if not isinstance(value, str):
        return value
    if len(value) > MAX_LITERAL_CHARS:
        raise Malformed(f"{name}: literal too long")
    try:
        return ast.literal_eval(value.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
        raise Malformed(f"{name}: not a literal") from e


def _ids(value: Any, name: str) -> tuple[str, ...]:
    """A list of message ids (integers or id strings), possibly written as a literal."""
    value = _literal(value, name)
    if value is None:
        raise Malformed(f"{name}: null")
    if not isinstance(value, list | tuple):
        raise Malformed(f"{name}: not a list")
    return tuple(ident({"id": v}, "id") for v in value) if value else ()


def _parts(value: Any) -> dict[str, tuple[str, ...]]:
    value = _literal(value, "evidence_parts")
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise Malformed("evidence_parts: not an object")
    return {k: _ids(v, "evidence_parts") for k, v in value.items() if v is not None}


def _question(q: dict[str, Any]) -> Question:
    if "evidence" not in q:
        raise Malformed("evidence: missing")
    try:
        evidence = _ids(q["evidence"], "evidence")
    except Malformed as e:
        if e.reason == "id: not an id":
            raise Malformed("evidence: not a list of ids") from e
        raise
    try:
        parts = _parts(q.get("evidence_parts"))
    except Malformed as e:
        raise Malformed("evidence_parts: not a list of ids") from e
    return Question(
        conversation=ident(q, "conversation"),
        type=text_field(q, "type").strip(),
        index=integer(q, "index", default=0),
        text=text_field(q, "question"),
        evidence=evidence,
        parts=parts,
    )


def _question_records(path: Path, bad: Skipped) -> list[dict[str, Any]]:
    """The question objects of ``path``: JSON objects, or Python dict literals (bare or as a
    JSON string)."""
    out: list[dict[str, Any]] = []
    for line in read_lines(path, bad):
        try:
            value: Any = orjson.loads(line)
        except orjson.JSONDecodeError:
            value = line
        try:
            value = _literal(value, "line")
        except Malformed:
            bad.add(path.name, "neither JSON nor a Python literal")
            continue
        if not isinstance(value, dict):
            bad.add(path.name, "not an object")
            continue
        out.append(value)
    return out


def _message_records(path: Path, bad: Skipped) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for line in read_lines(path, bad):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            bad.add(path.name, "invalid JSON")
            continue
        if not isinstance(value, dict):
            bad.add(path.name, "not a JSON object")
            continue
        out.append(value)
    return out


# -- assembling ---------------------------------------------------------------------------


def _documents(messages: list[Message], bad: Skipped) -> list[Doc]:
    seen: set[str] = set()
    batches: dict[tuple[str, int, str | None], list[Message]] = defaultdict(list)
    for m in messages:
        if m.id in seen:
            bad.add(MESSAGES, "id: repeated in its conversation")
            continue
        seen.add(m.id)
        batches[(m.conversation, m.batch, m.anchor)].append(m)
    docs: list[Doc] = []
    for (conversation, batch, anchor), group in batches.items():
        docs.append(
            Doc(
                owner=conversation,
                title=f"{conversation} batch {batch}" + (f" ({anchor})" if anchor else ""),
                observed_at=anchor,
                units=tuple((m.id, m.line) for m in group),
            )
        )
    return docs


def _asked_at(docs: list[Doc]) -> dict[str, str]:
    """Per conversation, a day after its latest anchor (every message said by then)."""
    latest: dict[str, date] = {}
    for d in docs:
        if d.observed_at:
            day = date.fromisoformat(d.observed_at[:10])
            latest[d.owner] = max(latest.get(d.owner, day), day)
    return {c: f"{(day + timedelta(days=1)).isoformat()}T00:00:00Z" for c, day in latest.items()}


def load_beam(data: Path) -> Beam:
    bad = Skipped()
    messages = convert(_message_records(data / MESSAGES, bad), MESSAGES, bad, _message)
    docs = _documents(messages, bad)
    known = {unit for d in docs for unit, _ in d.units}
    asked = _asked_at(docs)
    questions = convert(_question_records(data / QUESTIONS, bad), QUESTIONS, bad, _question)
    out = Beam(Dataset("beam", docs, []))
    dropped = 0
    queries: list[Query] = []
    seen: set[str] = set()
    for q in questions:
        qid = f"{q.conversation}#{q.type}#{q.index}"
        if qid in seen:
            bad.add(QUESTIONS, "question: repeated")
            continue
        seen.add(qid)
        if not q.evidence:
            out.unscored.append((q.conversation, q.type))
            continue
        named = {unit_id(q.conversation, e) for e in q.evidence}
        relevant = named & known
        dropped += len(named - relevant)
        if not relevant:
            bad.add(QUESTIONS, "evidence: names no message")
            continue
        queries.append(
            Query(
                qid, q.conversation, q.text, frozenset(relevant), q.type, asked.get(q.conversation)
            )
        )
        out.parts[qid] = {
            name: frozenset(unit_id(q.conversation, e) for e in ids) & known
            for name, ids in q.parts.items()
        }
    if dropped:
        bad.counts[f"{QUESTIONS}: evidence id names no message"] += dropped
    return replace(
        out,
        dataset=replace(out.dataset, queries=queries, malformed=bad.as_dict()),
        evidence_dropped=dropped,
    )


def first_conversations(beam: Beam, limit: int) -> Beam:
    """The first ``limit`` conversations (in file order) and their questions: a quicker,
    indicative run."""
    order = list(dict.fromkeys(d.owner for d in beam.dataset.docs))
    kept = set(order[:limit])
    ds = beam.dataset
    queries = [q for q in ds.queries if q.owner in kept]
    return replace(
        beam,
        dataset=replace(ds, docs=[d for d in ds.docs if d.owner in kept], queries=queries),
        parts={q.id: beam.parts[q.id] for q in queries},
        unscored=[u for u in beam.unscored if u[0] in kept],
    )
