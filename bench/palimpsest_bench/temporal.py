"""Temporal correctness: SituatedQA as-of answers and YAGO11k point-in-time lookups.

Both harnesses load a dataset's facts into a fresh tenant of the configured Neo4j (the one the
running server uses) through the resolver code the GraphQL API calls (``assert_facts`` in
batches of at most 200, ``supersede``), answer every as-of query with ``list_facts`` under a
``time_view`` built from a wire ``asOf`` string, score exact match and return one JSON-ready
dict. The tenant's graph data is erased afterwards unless ``keep`` is set. Only the pure
helpers (date rules, planning, scoring) are unit tested; the rest needs the database.

SituatedQA mapping (``facts.jsonl`` rows are annotated timelines of one question):

- subject = the question text (type ``question``), predicate ``answer``, ``objectValue`` = one
  answer: a row with several answers becomes one fact per distinct answer, all with the row's
  interval. ``validAt``/``invalidAt`` go over the wire as written (``YYYY`` and ``YYYY-MM-DD``;
  a partial date is its first instant, so a year means 1 January).
- A question can have several timelines (independent annotations). They share the subject and
  stay distinct facts through a natural key of (question id, timeline, row, answer), so an
  as-of read returns the union of what every timeline says held then; identical rows of two
  timelines are two facts, never one fact closed or superseded twice.
- Older values are loaded first and the store closes them: within one timeline, dated rows are
  ordered by (start, end); when a row's successor starts strictly later and the row either has
  no end or ends exactly when the successor starts, the row is asserted without ``invalidAt``
  and superseded by the successor after both exist (answer i by the successor's answer i; the
  store sets ``invalid_at`` to the successor's ``valid_at``). Answers beyond the successor's
  count keep an explicit end (their own, or the successor's start). Rows without a start have
  no place in the order and are never closed. Supersessions run oldest first (a retired fact
  cannot replace another).
- A year-only end equal to its year-only start ("2017" to "2017": the value held within that
  year) is empty under the 1-January rule, and the store refuses empty intervals, so it is
  stored as the whole year, ``[2017, 2018)``. Any other empty interval is dropped and counted.
- As-of: a year means 1 July of that year (``"2021"`` is sent as ``"2021-07-01"``), anything
  finer is sent as written. A query scores a hit when any predicted answer equals one of its
  ``gold_answers`` (the answers for that date; ``any_answer`` is the union over all dates and
  is not used) after the usual QA answer normalisation (lower case, no punctuation, no
  articles, single spaces): answers are value entities shared across the scope, so the stored
  spelling can be another question's casing. Queries whose question has no timeline in
  ``facts.jsonl`` (all of date type ``orig``: static questions) cannot be answered from facts;
  they are skipped, counted in ``skipped`` and in ``exact_match_all`` (which scores them as
  misses).

YAGO11k mapping: each row is one fact, subject and object entities of type ``entity`` named as
in the file, predicate = the relation, default natural key. Validity is ``[start_year,
end_year + 1)`` in years (1 January each), open when ``end_open``; a missing start leaves
``validAt`` open; an unknown end (empty and not open) is stored without any validity. Rows are
loaded oldest start first and never superseded: YAGO relations are multi-valued (prizes,
clubs, creations) and ``end_open`` means the fact still holds. A probe asks what held on 1 July
of ``as_of_year`` and scores a hit when the predicted object set equals ``gold_objects``
exactly (empty gold: nothing held). Probes whose subject and relation have a fact of unknown
validity are skipped.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import re
import string
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from palimpsest.config import Settings
from palimpsest.cypher.executor import Statement
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers import facts as fr
from palimpsest.resolvers.fact_input import MAX_BATCH, EntityRef, FactDraft, normalize
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest.timeparse import parse_time
from palimpsest_bench.common import gather_limited, principal

Progress = Callable[[str], None]

SCOPE = Scope.USER
BATCH = MAX_BATCH
READ_CONCURRENCY = 16
LIST_LIMIT = 1000
SQA_SUBJECT_TYPE = "question"
SQA_PREDICATE = "answer"
YAGO_ENTITY_TYPE = "entity"

# Bench-only clean-up of the eval tenant (the product has no "erase a scope's graph" yet).
ERASE_ENTITIES = Statement(
    "BENCH_ERASE_ENTITIES",
    """
MATCH (e:Entity {scope_key: $scope_key})
WITH e LIMIT 5000
DETACH DELETE e
RETURN count(*) AS deleted
""",
)


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


YagoValidity = tuple[str | None, str | None]


def yago_interval(start_year: str, end_year: str, end_open: str | bool) -> YagoValidity | None:
    """Wire ``(validAt, invalidAt)`` for a YAGO row; ``None`` when the end is unknown."""
    is_open = end_open is True or str(end_open).strip().lower() == "true"
    start = f"{int(start_year):04d}" if start_year.strip() else None
    if is_open:
        return start, None
    if not end_year.strip():
        return None
    return start, f"{int(end_year) + 1:04d}"


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


def exact_set(predicted: Iterable[str], gold: Iterable[str]) -> bool:
    """YAGO exact match: the predicted object set is the gold set (empty gold: nothing)."""
    return {normalize(p) for p in predicted} == {normalize(g) for g in gold}


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
        return _ratio(sum(self.hits.values()), self.n)

    def by_type(self) -> dict[str, float]:
        return {k: _ratio(self.hits[k], self.total[k]) for k in sorted(self.total)}


def _ratio(hits: int, n: int) -> float:
    return round(hits / n, 4) if n else 0.0


# -- SituatedQA planning (pure) -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Planned:
    """One fact to assert, with the sort key that loads older values first."""

    key: str
    draft: FactDraft
    order: tuple[int, datetime]


@dataclass(slots=True)
class Plan:
    facts: list[Planned]
    supersessions: list[tuple[str, str]]  # (old natural key, new natural key), oldest first
    subjects: dict[str, str]  # question id -> subject name
    dropped: int = 0


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


def plan_situatedqa(records: Iterable[dict[str, Any]]) -> Plan:
    groups: dict[tuple[str, int], list[_Row]] = defaultdict(list)
    subjects: dict[str, str] = {}
    dropped = 0
    for rec in records:
        qid, timeline = str(rec["question_id"]), int(rec.get("timeline", 0))
        subjects.setdefault(qid, rec["question"])
        try:
            valid_at, invalid_at = situated_interval(rec.get("valid_at"), rec.get("invalid_at"))
        except ValueError:
            dropped += 1
            continue
        answers = list(dict.fromkeys(a for a in rec["answers"] if a.strip()))
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
                    invalid_at=_wire(end, "invalid_at"),
                )
                order = (0, _MIN) if row.start is None else (1, row.start)
                planned.append(Planned(key, draft, order))
    planned.sort(key=lambda p: p.order)  # stable: file order within one start
    pairs.sort(key=lambda p: p[0])
    return Plan(planned, [(a, b) for _, a, b in pairs], subjects, dropped)


def _successor_start(rows: Sequence[_Row], row: _Row) -> str | None:
    later = [r for r in rows if r.start and row.start and r.start > row.start]
    return min(later, key=lambda r: r.start or _MAX).valid_at if later else None


# -- running against the database ---------------------------------------------------------


def _principal(dataset: str) -> Principal:
    return principal(f"eval-{dataset}-{uuid.uuid4().hex[:12]}", "eval")


async def _erase(svc: Services, who: Principal) -> None:
    key = resolve_scope(who, SCOPE).scope_key
    while (await svc.db.write(ERASE_ENTITIES, {"scope_key": key}))[0]["deleted"]:
        pass


async def _load(
    svc: Services,
    who: Principal,
    drafts: Sequence[FactDraft],
    progress: Progress,
    after_batch: Callable[[list[fr.Asserted], int], Awaitable[None]] | None = None,
) -> None:
    started = time.perf_counter()
    for i in range(0, len(drafts), BATCH):
        written = await fr.assert_facts(svc, who, SCOPE, drafts[i : i + BATCH])
        if after_batch is not None:
            await after_batch(written, i)
        done = min(i + BATCH, len(drafts))
        if done == len(drafts) or (i // BATCH) % 10 == 9:
            rate = done / max(time.perf_counter() - started, 1e-9)
            progress(f"  loaded {done}/{len(drafts)} facts ({rate:.0f}/s)")


async def _objects_at(
    svc: Services, who: Principal, subject: EntityRef, predicate: str, as_of: str
) -> list[str]:
    view = fr.time_view(svc, parse_time(as_of, "asOf"), None)
    found = await fr.list_facts(svc, who, SCOPE, view, subject, predicate, LIST_LIMIT)
    return [f.object.name for f in found.items]


def _wire(text: str | None, field: str) -> datetime | None:
    """Drafts carry datetimes; the datasets write wire dates (YYYY, YYYY-MM-DD, ...)."""
    return None if text is None else parse_time(text, field)


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open("rb") as fh:
        return [orjson.loads(line) for line in fh if line.strip()]


def _result(dataset: str, tally: Tally, started: float, **extra: Any) -> dict[str, Any]:
    return {
        "dataset": dataset,
        "n": tally.n,
        "exact_match": tally.exact_match(),
        "by_type": tally.by_type(),
        "seconds": round(time.perf_counter() - started, 2),
        **extra,
    }


async def run_situatedqa(
    settings: Settings, data: Path, progress: Progress, keep: bool = False
) -> dict[str, Any]:
    started = time.perf_counter()
    plan = plan_situatedqa(_read_jsonl(data / "facts.jsonl"))
    queries = _read_jsonl(data / "asof.jsonl")
    who = _principal("situatedqa")
    progress(
        f"situatedqa: {len(plan.facts)} facts ({plan.dropped} rows dropped), "
        f"{len(plan.supersessions)} supersessions, {len(queries)} queries; tenant {who.tenant_id}"
    )
    async with open_services(settings) as svc:
        try:
            ids: dict[str, str] = {}
            pending = list(plan.supersessions)

            async def supersede_ready(written: list[fr.Asserted], offset: int) -> None:
                for p, a in zip(plan.facts[offset : offset + BATCH], written, strict=True):
                    ids[p.key] = a.fact.id
                while pending and pending[0][0] in ids and pending[0][1] in ids:
                    old, new = pending.pop(0)
                    await fr.supersede(svc, who, SCOPE, ids[old], ids[new])

            load_started = time.perf_counter()
            await _load(svc, who, [p.draft for p in plan.facts], progress, supersede_ready)
            if pending:
                raise RuntimeError(f"{len(pending)} supersessions never became ready")
            load_seconds = time.perf_counter() - load_started

            answer_started = time.perf_counter()
            tally, strict = Tally(), Tally()
            answerable = [q for q in queries if str(q["question_id"]) in plan.subjects]
            for q in queries:
                if str(q["question_id"]) not in plan.subjects:
                    tally.skip(q["date_type"])
            jobs = [_sqa_job(svc, who, plan, q) for q in answerable]
            predictions = await gather_limited(jobs, READ_CONCURRENCY)
            for q, predicted in zip(answerable, predictions, strict=True):
                tally.add(q["date_type"], any_match(predicted, q["gold_answers"]))
                strict.add(q["date_type"], only_gold(predicted, q["gold_answers"]))
            answer_seconds = time.perf_counter() - answer_started
        finally:
            if not keep:
                await _erase(svc, who)
    progress(f"situatedqa: {tally.n} scored, {sum(tally.skipped.values())} skipped")
    return _result(
        "situatedqa",
        tally,
        started,
        skipped=dict(sorted(tally.skipped.items())),
        exact_match_all=_ratio(sum(tally.hits.values()), len(queries)),
        only_gold=strict.exact_match(),
        only_gold_by_type=strict.by_type(),
        facts=len(plan.facts),
        load_seconds=round(load_seconds, 2),
        load_facts_per_s=round(len(plan.facts) / max(load_seconds, 1e-9), 1),
        answer_seconds=round(answer_seconds, 2),
    )


def _sqa_job(
    svc: Services, who: Principal, plan: Plan, q: dict[str, Any]
) -> Callable[[], Awaitable[list[str]]]:
    subject = EntityRef(SQA_SUBJECT_TYPE, plan.subjects[str(q["question_id"])])
    as_of = situated_as_of(str(q["as_of"]), str(q.get("as_of_granularity", "")))
    return lambda: _objects_at(svc, who, subject, SQA_PREDICATE, as_of)


def _yago_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))


def plan_yago(rows: Iterable[dict[str, str]]) -> tuple[list[FactDraft], set[tuple[str, str]]]:
    """Drafts oldest start first, and the (subject, relation) pairs with unknown validity."""
    keyed: list[tuple[tuple[int, int], FactDraft]] = []
    unknown: set[tuple[str, str]] = set()
    for r in rows:
        validity = yago_interval(r["start_year"], r["end_year"], r["end_open"])
        if validity is None:
            unknown.add((normalize(r["subject"]), r["relation"]))
        valid_at, invalid_at = validity or (None, None)
        draft = FactDraft(
            subject=EntityRef(YAGO_ENTITY_TYPE, r["subject"]),
            predicate=r["relation"],
            object=EntityRef(YAGO_ENTITY_TYPE, r["object"]),
            object_value=None,
            valid_at=_wire(valid_at, "valid_at"),
            invalid_at=_wire(invalid_at, "invalid_at"),
        )
        keyed.append(((0, 0) if valid_at is None else (1, int(valid_at)), draft))
    keyed.sort(key=lambda k: k[0])
    return [d for _, d in keyed], unknown


async def run_yago11k(
    settings: Settings, data: Path, progress: Progress, keep: bool = False
) -> dict[str, Any]:
    started = time.perf_counter()
    drafts, unknown = plan_yago(_yago_rows(data / "facts.tsv"))
    probes = _read_jsonl(data / "asof_probes.jsonl")
    who = _principal("yago11k")
    progress(f"yago11k: {len(drafts)} facts, {len(probes)} probes; tenant {who.tenant_id}")
    async with open_services(settings) as svc:
        try:
            load_started = time.perf_counter()
            await _load(svc, who, drafts, progress)
            load_seconds = time.perf_counter() - load_started

            answer_started = time.perf_counter()
            tally = Tally()
            scored = []
            for p in probes:
                if (normalize(p["subject"]), p["relation"]) in unknown:
                    tally.skip(p["relation"])
                else:
                    scored.append(p)
            jobs = [_yago_job(svc, who, p) for p in scored]
            predictions = await gather_limited(jobs, READ_CONCURRENCY)
            for p, predicted in zip(scored, predictions, strict=True):
                tally.add(p["relation"], exact_set(predicted, p["gold_objects"]))
            answer_seconds = time.perf_counter() - answer_started
        finally:
            if not keep:
                await _erase(svc, who)
    progress(f"yago11k: {tally.n} scored, {sum(tally.skipped.values())} skipped")
    return _result(
        "yago11k",
        tally,
        started,
        skipped=dict(sorted(tally.skipped.items())),
        facts=len(drafts),
        load_seconds=round(load_seconds, 2),
        load_facts_per_s=round(len(drafts) / max(load_seconds, 1e-9), 1),
        answer_seconds=round(answer_seconds, 2),
    )


def _yago_job(
    svc: Services, who: Principal, p: dict[str, Any]
) -> Callable[[], Awaitable[list[str]]]:
    subject = EntityRef(YAGO_ENTITY_TYPE, str(p["subject"]))
    as_of = year_as_of(int(p["as_of_year"]))
    return lambda: _objects_at(svc, who, subject, str(p["relation"]), as_of)
