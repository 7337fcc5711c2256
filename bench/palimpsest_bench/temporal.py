"""Temporal correctness: SituatedQA as-of answers and YAGO11k point-in-time lookups.

Both harnesses load a dataset's facts into a fresh tenant of the configured Neo4j (the one the
running server uses) through the resolver code the GraphQL API calls (``assert_facts`` in
batches of at most 200, ``supersede``), answer every as-of query with ``list_facts`` under a
``time_view`` built from a wire ``asOf`` string, score exact match and return one JSON-ready
dict. The tenant's graph data is erased afterwards unless ``keep`` is set. Only the pure
helpers (date rules, planning, scoring) are unit tested; the rest needs the database.
``order`` (``--order``) changes the load order and ``reconcile`` (``--reconcile``) loads as a
runtime would, letting the store close values (``temporal_reconcile``); the rules below are
those of the default, sorted, explicit load.

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

Malformed records (a null or missing field, a wrong type, a date the API refuses, a fact
``assertFacts`` would refuse, a blank, non-UTF-8 or non-object line, a TSV row with the wrong
number of columns) are skipped and counted under ``malformed`` (``"<file>: <reason>"``); a
query or probe that is malformed is neither scored nor counted in ``n``. ``limit`` keeps the
first N records of each file (smoke runs).

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

import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Statement
from palimpsest.domain.names import normalise
from palimpsest.domain.time.timeparse import parse_time
from palimpsest.identity import Principal, Role, Scope, resolve_scope
from palimpsest.resolvers.facts import ledger as fr
from palimpsest.resolvers.facts.inputs import MAX_BATCH
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant.ontology import set_ontology
from palimpsest.runtime import open_services
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest_bench import temporal_reconcile as rec
from palimpsest_bench.common import gather_limited, principal
from palimpsest_bench.temporal_data import (
    SQA_PREDICATE,
    SQA_SUBJECT_TYPE,
    Tally,
    any_match,
    only_gold,
    ratio,
    read_situatedqa,
)
from palimpsest_bench.yago_data import YAGO_ENTITY_TYPE, YagoProbe, exact_set, read_yago11k

Progress = Callable[[str], None]

SCOPE = Scope.USER
BATCH = MAX_BATCH
READ_CONCURRENCY = 16
LIST_LIMIT = 1000

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


# -- running against the database ---------------------------------------------------------


def _principal(dataset: str) -> Principal:
    return principal(f"eval-{dataset}-{uuid.uuid4().hex[:12]}", "eval")


async def _erase(svc: Services, who: Principal) -> None:
    db = svc.db.scoped(resolve_scope(who, SCOPE))
    while (await db.write(ERASE_ENTITIES))[0]["deleted"]:
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
    settings: Settings,
    data: Path,
    progress: Progress,
    keep: bool = False,
    limit: int | None = None,
    order: rec.Order = rec.Order.SORTED,
    reconcile: bool = False,
    seed: int = 1,
) -> dict[str, Any]:
    started = time.perf_counter()
    plan, queries = read_situatedqa(data, limit)
    facts = rec.ordered(plan.facts, order, seed)
    drafts = [p.draft for p in facts]
    names = {q: [q] for q in plan.subjects.values()}  # question -> the subjects read for it
    if reconcile:
        for p in facts:
            names[p.draft.subject.name] = sorted(
                {
                    *names[p.draft.subject.name],
                    rec.timeline_subject(p.draft.subject.name, p.timeline),
                }
            )
        drafts = rec.as_runtime(
            [
                rec.with_subject(p.draft, rec.timeline_subject(p.draft.subject.name, p.timeline))
                for p in facts
            ],
            set(rec.SINGLE["situatedqa"]),
        )
    who = _principal("situatedqa")
    progress(
        f"situatedqa: {len(plan.facts)} facts ({plan.dropped} rows dropped), "
        f"{len(plan.supersessions)} supersessions, {len(queries)} queries, "
        f"{plan.malformed.total} malformed records skipped; tenant {who.tenant_id}"
    )
    async with open_services(settings) as svc:
        try:
            ids: dict[str, str] = {}
            pending = [] if reconcile else list(plan.supersessions)

            async def supersede_ready(written: list[fr.Asserted], offset: int) -> None:
                for p, a in zip(facts[offset : offset + BATCH], written, strict=True):
                    ids[p.key] = a.fact.id
                while pending and pending[0][0] in ids and pending[0][1] in ids:
                    old, new = pending.pop(0)
                    await fr.supersede(svc, who, SCOPE, ids[old], ids[new])

            if reconcile:
                await _declare(svc, who, "situatedqa")
            load_started = time.perf_counter()
            await _load(svc, who, drafts, progress, supersede_ready)
            if pending:
                raise RuntimeError(f"{len(pending)} supersessions never became ready")
            load_seconds = time.perf_counter() - load_started

            answer_started = time.perf_counter()
            tally, strict = Tally(), Tally()
            answerable = [q for q in queries if q.question_id in plan.subjects]
            for q in queries:
                if q.question_id not in plan.subjects:
                    tally.skip(q.date_type)
            jobs = [
                _sqa_job(svc, who, names[plan.subjects[q.question_id]], q.as_of) for q in answerable
            ]
            predictions = await gather_limited(jobs, READ_CONCURRENCY)
            for q, predicted in zip(answerable, predictions, strict=True):
                tally.add(q.date_type, any_match(predicted, q.gold_answers))
                strict.add(q.date_type, only_gold(predicted, q.gold_answers))
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
        malformed=plan.malformed.as_dict(),
        exact_match_all=ratio(sum(tally.hits.values()), len(queries)),
        only_gold=strict.exact_match(),
        only_gold_by_type=strict.by_type(),
        facts=len(plan.facts),
        load_seconds=round(load_seconds, 2),
        load_facts_per_s=round(len(plan.facts) / max(load_seconds, 1e-9), 1),
        answer_seconds=round(answer_seconds, 2),
        **_mode("situatedqa", order, reconcile, seed),
    )


def _sqa_job(
    svc: Services, who: Principal, subjects: Sequence[str], as_of: str
) -> Callable[[], Awaitable[list[str]]]:
    async def union() -> list[str]:
        found: list[str] = []
        for name in subjects:
            subject = EntityRef(SQA_SUBJECT_TYPE, name)
            found += await _objects_at(svc, who, subject, SQA_PREDICATE, as_of)
        return found

    return union


def _mode(dataset: str, order: rec.Order, reconcile: bool, seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {"order": order.value, "reconcile": reconcile}
    if order is rec.Order.SHUFFLED:
        out["seed"] = seed
    if reconcile:
        out["relations"] = rec.declared(dataset)
    return out


async def _declare(svc: Services, who: Principal, dataset: str) -> None:
    """The eval tenant's ontology, set by an administrator of that tenant."""
    admin = replace(who, roles=frozenset({Role.ADMIN}), memory_scopes=frozenset(Scope))
    await set_ontology(svc, admin, rec.ontology(dataset))


async def run_yago11k(
    settings: Settings,
    data: Path,
    progress: Progress,
    keep: bool = False,
    limit: int | None = None,
    order: rec.Order = rec.Order.SORTED,
    reconcile: bool = False,
    seed: int = 1,
) -> dict[str, Any]:
    started = time.perf_counter()
    drafts, unknown, probes, malformed = read_yago11k(data, limit)
    drafts = rec.ordered(drafts, order, seed)
    if reconcile:
        drafts = rec.as_runtime(drafts, set(rec.SINGLE["yago11k"]))
    who = _principal("yago11k")
    progress(
        f"yago11k: {len(drafts)} facts, {len(probes)} probes, {malformed.total} malformed "
        f"records skipped; tenant {who.tenant_id}"
    )
    async with open_services(settings) as svc:
        try:
            if reconcile:
                await _declare(svc, who, "yago11k")
            load_started = time.perf_counter()
            await _load(svc, who, drafts, progress)
            load_seconds = time.perf_counter() - load_started

            answer_started = time.perf_counter()
            tally = Tally()
            scored = []
            for p in probes:
                if (normalise(p.subject), p.relation) in unknown:
                    tally.skip(p.relation)
                else:
                    scored.append(p)
            jobs = [_yago_job(svc, who, p) for p in scored]
            predictions = await gather_limited(jobs, READ_CONCURRENCY)
            for p, predicted in zip(scored, predictions, strict=True):
                tally.add(p.relation, exact_set(predicted, p.gold_objects))
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
        malformed=malformed.as_dict(),
        facts=len(drafts),
        load_seconds=round(load_seconds, 2),
        load_facts_per_s=round(len(drafts) / max(load_seconds, 1e-9), 1),
        answer_seconds=round(answer_seconds, 2),
        **_mode("yago11k", order, reconcile, seed),
    )


def _yago_job(svc: Services, who: Principal, p: YagoProbe) -> Callable[[], Awaitable[list[str]]]:
    subject = EntityRef(YAGO_ENTITY_TYPE, p.subject)
    return lambda: _objects_at(svc, who, subject, p.relation, p.as_of)
