"""The pure half of the recall evaluation: dataset files into documents and queries.

The mapping is described in ``recall_eval.py``. Records that do not fit (a null or missing
field, a wrong type, blank text, a timestamp the API refuses, text that cannot be one Markdown
paragraph, a blank, non-UTF-8 or non-object line, a qrels line that is not
``query corpus score``) are skipped and counted in ``Dataset.malformed``
(``"<file>: <reason>"``), never fatal.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from palimpsest.domain.documents import markdown
from palimpsest.resolvers.documents import importing as importer
from palimpsest_bench.records import (
    Malformed,
    Skipped,
    convert,
    ident,
    integer,
    optional_text,
    read_jsonl,
    read_lines,
    text_field,
    text_list,
    wire_date,
)

# -- Markdown units (pure) ------------------------------------------------------------------

_SPACE = re.compile(r"\s+")
_ORDERED = re.compile(r"^(\d{1,9})([.)])")


def one_block(text: str) -> str:
    """``text`` as one Markdown paragraph line: whitespace collapsed, block markers escaped.

    Raises ``ValueError`` for blank text or text that stays more (or other) than one paragraph.
    """
    line = _SPACE.sub(" ", text).strip()
    if not line:
        raise ValueError("a unit must not be blank")
    if not _is_one_paragraph(line):
        if m := _ORDERED.match(line):  # "1. x" / "1) x" would start an ordered list
            line = f"{m[1]}\\{m[2]}{line[m.end() :]}"
        elif not line[0].isalnum():  # -, +, *, #, >, `, ~, <, =, |, ... : escape the marker
            line = "\\" + line
        if not _is_one_paragraph(line):
            raise ValueError(f"cannot make one paragraph of {line[:60]!r}")
    return line


def _is_one_paragraph(line: str) -> bool:
    parsed = markdown.parse(line + "\n").chunks
    return (
        len(parsed) == 1
        and parsed[0].type is markdown.ChunkType.PARAGRAPH
        and parsed[0].text.strip() == line
    )


def units_markdown(lines: Sequence[str], heading: str | None = None) -> str:
    """Paragraph lines (from ``one_block``) separated by blank lines: one chunk per line,
    after a level-1 heading chunk when ``heading`` is given."""
    blocks = ([f"# {heading}"] if heading else []) + list(lines)
    return "\n\n".join(blocks) + "\n"


def locomo_line(speaker: str, text: str) -> str:
    return one_block(f"{speaker}: {text}")


def wire_time(observed_at: str) -> str:
    """A dataset timestamp for the wire: a naive ``YYYY-MM-DDTHH:MM[:SS]`` is read as UTC."""
    text = observed_at.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?", text):
        return text + "Z"
    return text


def _unit(text: str, name: str) -> str:
    """``one_block`` for a record field; a text that cannot be one unit is malformed."""
    try:
        return one_block(text)
    except ValueError as e:
        raise Malformed(f"{name}: not one paragraph") from e


def _title(text: str) -> str:
    line = _SPACE.sub(" ", text).strip()
    return line[: importer.MAX_TITLE] or "untitled"


# -- datasets (pure) ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Doc:
    """One document to import: its owner, title, observed time and units (id, line).

    ``heading`` (a ``one_block`` line) becomes a level-1 heading chunk before the units.
    """

    owner: str
    title: str
    observed_at: str | None
    units: tuple[tuple[str, str], ...]
    heading: str | None = None


@dataclass(frozen=True, slots=True)
class Query:
    id: str
    owner: str
    text: str
    relevant: frozenset[str]
    category: str | None = None
    # When it is asked (wire time): LoCoMo's questions come right after their conversation,
    # so its last session's time is the query's reference time (``when.to``).
    asked_at: str | None = None


@dataclass(frozen=True, slots=True)
class Dataset:
    name: str
    docs: list[Doc]
    queries: list[Query]
    by_document: bool = False  # a hit is the chunk's document (SciFact), not the chunk
    malformed: dict[str, int] = field(default_factory=dict)  # "<file>: <reason>" -> count


@dataclass(frozen=True, slots=True)
class _Turn:
    sample: str
    session: int
    index: int
    dia_id: str
    line: str
    observed_at: str
    when: str


def _turn(t: dict[str, Any]) -> _Turn:
    return _Turn(
        sample=ident(t, "sample_id"),
        session=integer(t, "session"),
        index=integer(t, "turn_index"),
        dia_id=ident(t, "dia_id"),
        line=_unit(f"{text_field(t, 'speaker')}: {text_field(t, 'text')}", "text"),
        observed_at=wire_date(wire_time(text_field(t, "observed_at")), "observed_at"),
        when=optional_text(t, "session_date_time") or "",
    )


def _locomo_query(q: dict[str, Any]) -> Query:
    sample = ident(q, "sample_id")
    return Query(
        id=f"{sample}#{ident(q, 'qa_index')}",
        owner=sample,
        text=text_field(q, "question"),
        relevant=frozenset(text_list(q, "evidence")),
        category=ident(q, "category"),
    )


def _asked_at(docs: list[Doc], owner: str) -> str | None:
    """A day after the conversation's last session started (its turns all said by then)."""
    started = [
        datetime.fromisoformat(d.observed_at) for d in docs if d.owner == owner and d.observed_at
    ]
    return (max(started) + timedelta(days=1)).isoformat() if started else None


def load_locomo(data: Path) -> Dataset:
    bad = Skipped()
    sessions: dict[tuple[str, int], list[_Turn]] = defaultdict(list)
    for t in convert(read_jsonl(data / "turns.jsonl", bad), "turns.jsonl", bad, _turn):
        sessions[(t.sample, t.session)].append(t)
    out: list[Doc] = []
    for (sample, session), turns in sorted(sessions.items()):
        turns.sort(key=lambda t: t.index)
        first = turns[0]
        out.append(
            Doc(
                owner=sample,
                title=_title(f"{sample} session {session} ({first.when})"),
                observed_at=first.observed_at,
                units=tuple((t.dia_id, t.line) for t in turns),
            )
        )
    qa = read_jsonl(data / "qa.jsonl", bad)
    queries = convert(qa, "qa.jsonl", bad, _locomo_query)
    queries = [replace(q, asked_at=_asked_at(out, q.owner)) for q in queries]
    return Dataset("locomo", out, queries, malformed=bad.as_dict())


def _abstract(d: dict[str, Any]) -> Doc:
    doc_id = ident(d, "_id")
    title = optional_text(d, "title") or ""
    body = optional_text(d, "text") or ""
    if not body.strip() and not title.strip():
        raise Malformed("text: blank")
    return Doc(
        owner="eval",
        title=_title(title or doc_id),
        observed_at=None,
        units=((doc_id, _unit(body if body.strip() else title, "text")),),
        heading=_unit(title, "title") if title.strip() else None,
    )


def _qrels(path: Path, bad: Skipped) -> dict[str, set[str]]:
    """Relevant corpus ids per query id from a BEIR ``qrels.tsv`` (header optional)."""
    qrels: dict[str, set[str]] = defaultdict(set)
    for line in read_lines(path, bad):
        parts = line.split()
        if parts[:1] == ["query-id"]:
            continue
        if len(parts) != 3 or not re.fullmatch(r"-?\d+", parts[2]):
            bad.add(path.name, "not 'query corpus score'")
            continue
        if int(parts[2]) > 0:
            qrels[parts[0]].add(parts[1])
    return qrels


def load_scifact(data: Path, corpus: Path | None = None) -> Dataset:
    bad = Skipped()
    corpus_path = corpus or data / "corpus.jsonl"
    out = convert(read_jsonl(corpus_path, bad), corpus_path.name, bad, _abstract)
    qrels = _qrels(data / "qrels.tsv", bad)

    def query(q: dict[str, Any]) -> Query:
        qid = ident(q, "_id")
        return Query(id=qid, owner="eval", text=text_field(q, "text"), relevant=frozenset())

    found = convert(read_jsonl(data / "queries.jsonl", bad), "queries.jsonl", bad, query)
    queries = [
        Query(id=q.id, owner=q.owner, text=q.text, relevant=frozenset(rel))
        for q in found
        if (rel := qrels.get(q.id))
    ]
    return Dataset("scifact", out, queries, by_document=True, malformed=bad.as_dict())


@dataclass(frozen=True, slots=True)
class _Paragraph:
    id: str
    page: str
    index: int
    line: str


def _paragraph(p: dict[str, Any]) -> _Paragraph:
    return _Paragraph(
        id=ident(p, "_id"),
        page=ident(p, "page"),
        index=integer(p, "para"),
        line=_unit(text_field(p, "text"), "text"),
    )


def _timeqa_query(q: dict[str, Any]) -> Query:
    return Query(
        id=ident(q, "_id"),
        owner="eval",
        text=text_field(q, "question"),
        relevant=frozenset(text_list(q, "relevant")),
    )


def load_timeqa(data: Path) -> Dataset:
    bad = Skipped()
    pages: dict[str, list[_Paragraph]] = defaultdict(list)
    for p in convert(read_jsonl(data / "corpus.jsonl", bad), "corpus.jsonl", bad, _paragraph):
        pages[p.page].append(p)
    out: list[Doc] = []
    for page, paras in sorted(pages.items()):
        paras.sort(key=lambda p: p.index)
        units = tuple((p.id, p.line) for p in paras)
        out.append(Doc(owner="eval", title=_title(page), observed_at=None, units=units))
    found = convert(read_jsonl(data / "queries.jsonl", bad), "queries.jsonl", bad, _timeqa_query)
    return Dataset("timeqa", out, [q for q in found if q.relevant], malformed=bad.as_dict())


LOADERS: dict[str, Callable[[Path], Dataset]] = {
    "locomo": load_locomo,
    "scifact": load_scifact,
    "timeqa": load_timeqa,
}
