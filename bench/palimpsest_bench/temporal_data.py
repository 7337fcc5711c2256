"""The pure half of the temporal harnesses: date rules, reading SituatedQA's files (skipping
and counting malformed records), load planning and scoring (YAGO11k's half is ``yago_data``).
The mapping and scoring rules are described in ``temporal.py``; nothing here touches the
database.
"""

from __future__ import annotations

import hashlib
import itertools
import re
import string
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from palimpsest.domain.time.timeparse import parse_time
from palimpsest.errors import InvalidArgument
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest_bench.records import (
    Malformed,
    Skipped,
    accepted,
    convert,
    ident,
    integer,
    optional_text,
    read_jsonl,
    text_field,
    text_list,
    wire_date,
)

SQA_SUBJECT_TYPE = "question"
SQA_PREDICATE = "answer"

# -- pure rules ---------------------------------------------------------------------------


def year_as_of(year: int) -> str:
    """A year-only as-of means 1 July of that year."""
    return f"{year:04d}-07-01"


def situated_as_of(as_of: str, granularity: str) -> str:
    """The wire ``asOf`` for a SituatedQA query: a year is mid-year, finer dates as written."""
    text = as_of.strip()
    if granularity == "year" or re.fullmatch(r"\d{4}", text):
        return year_as_of(int(text[:4]))
    return text


def _is_year(text: str) -> bool:
    return re.fullmatch(r"\d{4}", text.strip()) is not None


def situated_interval(
    valid_at: str | None, invalid_at: str | None
) -> tuple[str | None, str | None]:
    """Wire ``(validAt, invalidAt)`` for one timeline row.

    A year-only end equal to a year-only start covers that year; any other empty interval
    raises ``ValueError`` (the caller drops the row).
    """
    if valid_at is None or invalid_at is None:
        return valid_at, invalid_at
    if parse_time(invalid_at, "invalid_at") > parse_time(valid_at, "valid_at"):
        return valid_at, invalid_at
    if _is_year(valid_at) and _is_year(invalid_at) and valid_at.strip() == invalid_at.strip():
        return valid_at, f"{int(invalid_at) + 1:04d}"
    raise ValueError(f"empty interval [{valid_at}, {invalid_at})")


def normalize_answer(text: str) -> str:
    """QA answer normalisation (SQuAD/NQ): lower case, no punctuation or articles."""
    lowered = text.lower()
    no_punct = "".join(ch for ch in lowered if ch not in set(string.punctuation))
    no_articles = re.sub(r"\b(a|an|the)\b", " ", no_punct)
    return " ".join(no_articles.split())


def any_match(predicted: Iterable[str], gold: Iterable[str]) -> bool:
    """SituatedQA exact match: some predicted answer is one of the gold answers."""
    wanted = {normalize_answer(g) for g in gold}
    return any(normalize_answer(p) in wanted for p in predicted)


def only_gold(predicted: Iterable[str], gold: Iterable[str]) -> bool:
    """Stricter SituatedQA check: something predicted and every predicted answer is gold."""
    wanted = {normalize_answer(g) for g in gold}
    found = {normalize_answer(p) for p in predicted}
    return bool(found) and found <= wanted


@dataclass(slots=True)
class Tally:
    hits: Counter[str] = field(default_factory=Counter)
    total: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, hit: bool) -> None:
        self.total[kind] += 1
        self.hits[kind] += int(hit)

    def skip(self, kind: str) -> None:
        self.skipped[kind] += 1

    @property
    def n(self) -> int:
        return sum(self.total.values())

    def exact_match(self) -> float:
        return ratio(sum(self.hits.values()), self.n)

    def by_type(self) -> dict[str, float]:
        return {k: ratio(self.hits[k], self.total[k]) for k in sorted(self.total)}


def ratio(hits: int, n: int) -> float:
    return round(hits / n, 4) if n else 0.0


# -- SituatedQA planning (pure) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Planned:
    """One fact to assert, with the sort key that loads older values first."""

    key: str
    draft: FactDraft
    order: tuple[int, datetime]
    timeline: int = 0  # the annotation it comes from (``--reconcile`` keeps them apart)


@dataclass(slots=True)
class Plan:
    facts: list[Planned]
    supersessions: list[tuple[str, str]]  # (old natural key, new natural key), oldest first
    subjects: dict[str, str]  # question id -> subject name
    dropped: int = 0
    malformed: Skipped = field(default_factory=Skipped)


_MIN = datetime.min.replace(tzinfo=UTC)
_MAX = datetime.max.replace(tzinfo=UTC)


@dataclass(slots=True)
class _Row:
    qid: str
    question: str
    timeline: int
    index: int
    answers: list[str]
    valid_at: str | None
    invalid_at: str | None
    start: datetime | None
    end: datetime | None
    keys: list[str] = field(default_factory=list)
    open_keys: set[str] = field(default_factory=set)  # loaded without an end, closed later


def _sqa_key(qid: str, timeline: int, index: int, answer: str) -> str:
    raw = "\x1f".join((qid, str(timeline), str(index), answer))
    return "situatedqa:" + hashlib.sha256(raw.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class _Record:
    """One well-formed ``facts.jsonl`` row."""

    qid: str
    question: str
    timeline: int
    answers: list[str]
    valid_at: str | None
    invalid_at: str | None


def _optional_date(rec: dict[str, Any], name: str) -> str | None:
    value = optional_text(rec, name)
    return None if value is None else wire_date(value, name)


def _sqa_record(rec: dict[str, Any]) -> _Record:
    found = _Record(
        qid=ident(rec, "question_id"),
        question=text_field(rec, "question"),
        timeline=integer(rec, "timeline", default=0),
        answers=text_list(rec, "answers"),
        valid_at=_optional_date(rec, "valid_at"),
        invalid_at=_optional_date(rec, "invalid_at"),
    )
    subject = EntityRef(SQA_SUBJECT_TYPE, found.question)
    for answer in found.answers:  # each becomes a fact; refuse the row if one could not
        if answer.strip():
            key = _sqa_key(found.qid, found.timeline, 0, answer)
            accepted(FactDraft(subject, SQA_PREDICATE, None, answer, natural_key=key))
    return found


def plan_situatedqa(records: Iterable[dict[str, Any]]) -> Plan:
    groups: dict[tuple[str, int], list[_Row]] = defaultdict(list)
    subjects: dict[str, str] = {}
    dropped = 0
    malformed = Skipped()
    for rec in convert(records, "facts.jsonl", malformed, _sqa_record):
        qid, timeline = rec.qid, rec.timeline
        subjects.setdefault(qid, rec.question)
        try:
            valid_at, invalid_at = situated_interval(rec.valid_at, rec.invalid_at)
        except ValueError:
            dropped += 1
            continue
        answers = list(dict.fromkeys(a for a in rec.answers if a.strip()))
        if not answers:
            dropped += 1
            continue
        group = groups[(qid, timeline)]
        row = _Row(
            qid=qid,
            question=subjects[qid],
            timeline=timeline,
            index=len(group),
            answers=answers,
            valid_at=valid_at,
            invalid_at=invalid_at,
            start=parse_time(valid_at, "valid_at") if valid_at else None,
            end=parse_time(invalid_at, "invalid_at") if invalid_at else None,
        )
        row.keys = [_sqa_key(qid, timeline, row.index, a) for a in answers]
        group.append(row)

    pairs: list[tuple[datetime, str, str]] = []
    for rows in groups.values():
        dated = sorted((r for r in rows if r.start), key=lambda r: (r.start, r.end or _MAX))
        for old, new in itertools.pairwise(dated):
            assert old.start is not None
            assert new.start is not None
            if new.start <= old.start or (old.end is not None and old.end != new.start):
                continue
            for old_key, new_key in zip(old.keys, new.keys, strict=False):
                old.open_keys.add(old_key)
                pairs.append((old.start, old_key, new_key))

    planned: list[Planned] = []
    for rows in groups.values():
        for row in rows:
            for answer, key in zip(row.answers, row.keys, strict=True):
                # A superseded answer is loaded open; the store closes it. Others keep (or,
                # when their open row was closed by a successor, get) an explicit end.
                end = None if key in row.open_keys else row.invalid_at
                if end is None and key not in row.open_keys and row.open_keys:
                    end = _successor_start(rows, row)
                draft = FactDraft(
                    subject=EntityRef(SQA_SUBJECT_TYPE, row.question),
                    predicate=SQA_PREDICATE,
                    object=None,
                    object_value=answer,
                    natural_key=key,
                    valid_at=row.start,
                    invalid_at=wire(end, "invalid_at"),
                )
                order = (0, _MIN) if row.start is None else (1, row.start)
                planned.append(Planned(key, draft, order, row.timeline))
    planned.sort(key=lambda p: p.order)  # stable: file order within one start
    pairs.sort(key=lambda p: p[0])
    return Plan(planned, [(a, b) for _, a, b in pairs], subjects, dropped, malformed)


def wire(text: str | None, field: str) -> datetime | None:
    """Drafts carry datetimes; the datasets write wire dates (YYYY, YYYY-MM-DD, ...). A date
    the API's Instant scalar refuses makes the record one ``assertFacts`` would refuse."""
    try:
        return None if text is None else parse_time(text, field)
    except InvalidArgument as e:
        raise Malformed("refused by assertFacts") from e


def _successor_start(rows: Sequence[_Row], row: _Row) -> str | None:
    later = [r for r in rows if r.start and row.start and r.start > row.start]
    return min(later, key=lambda r: r.start or _MAX).valid_at if later else None


@dataclass(frozen=True, slots=True)
class SqaQuery:
    question_id: str
    as_of: str  # as sent: a year is 1 July
    date_type: str
    gold_answers: list[str]


def sqa_query(rec: dict[str, Any]) -> SqaQuery:
    granularity = optional_text(rec, "as_of_granularity") or ""
    try:
        as_of = situated_as_of(text_field(rec, "as_of"), granularity)
    except ValueError as e:
        raise Malformed("as_of: not a date") from e
    return SqaQuery(
        question_id=ident(rec, "question_id"),
        as_of=wire_date(as_of, "as_of"),
        date_type=text_field(rec, "date_type"),
        gold_answers=text_list(rec, "gold_answers"),
    )


def read_situatedqa(data: Path, limit: int | None = None) -> tuple[Plan, list[SqaQuery]]:
    """The load plan and the well-formed queries; malformed records counted in the plan."""
    malformed = Skipped()
    records = read_jsonl(data / "facts.jsonl", malformed, limit)
    plan = plan_situatedqa(records)
    plan.malformed.counts.update(malformed.counts)
    rows = read_jsonl(data / "asof.jsonl", plan.malformed, limit)
    return plan, convert(rows, "asof.jsonl", plan.malformed, sqa_query)
