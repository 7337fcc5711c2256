"""Closure on write (docs/spec.md, Reconciliation): single-valued facts close what they replace.

``write_batch`` calls ``prepare`` before a batch is written and ``close`` after, in the
write's transaction. When a batch holds a fact whose predicate the tenant's confirmed ontology
declares single-valued for the subject's type, the scope's lock is taken first, so that the
timeline read here and the closures written from it cannot interleave with another writer's.
The closures themselves are computed by ``palimpsest.ontology.reconcile`` (pure).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from palimpsest.cypher import facts as q
from palimpsest.cypher import ontology as oq
from palimpsest.cypher.driver.executor import Row, ScopedTx, Tx
from palimpsest.identity import Principal
from palimpsest.identity.scopes import tenant_config_ref
from palimpsest.ontology import Ontology, parse_ontology, reconcile
from palimpsest.resolvers.services import Services
from palimpsest.schema.fact_rows import FactRow

# Stands for "open" in a fact's list of past ends (a stored list cannot hold null).
OPEN_END = datetime(9999, 12, 31, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Rules:
    """What the closure needs of the ontology, read once before the write."""

    ontology: Ontology | None

    def spellings(self, row: FactRow) -> frozenset[str] | None:
        if self.ontology is None:
            return None
        return self.ontology.single_spellings(row.subject_type, row.predicate)


async def load_rules(svc: Services, who: Principal) -> Rules:
    """The tenant's ontology, read on the server's behalf (as placement reads it)."""
    rows = await svc.db.scoped(tenant_config_ref(who)).read(oq.GET_ONTOLOGY)
    return _rules(rows)


async def read_rules(tx: Tx, who: Principal) -> Rules:
    """``load_rules`` inside a transaction of the unbound handle (a fact write's own): the
    tenant's configuration scope is reached through ``tx.scoped`` like any other."""
    return _rules(await tx.scoped(tenant_config_ref(who)).run(oq.GET_ONTOLOGY))


def _rules(rows: Sequence[Row]) -> Rules:
    return Rules(parse_ontology(rows[0]["markdown"]) if rows else None)


def prepare(
    rules: Rules | None, rows: Sequence[FactRow], locked_at: datetime
) -> tuple[datetime | None, list[FactRow]]:
    """Mark the single-valued rows of a batch resolved under the scope's fact lock.

    ``locked_at`` is the lock's time (``entities.resolve_proving``), never before the last
    closing write of the scope, so transaction time only moves forward. Returns it as the
    write's time when a row is single-valued (else None), and the rows marked. A
    single-valued fact without ``valid_at`` is valid from its ``observed_at``, else from the
    write's time: it is stored so, so that its reads agree with the timeline."""
    groups = [(row, rules.spellings(row) if rules else None) for row in rows]
    if not any(spellings for _, spellings in groups):
        return None, list(rows)
    return locked_at, [_single(row, spellings, locked_at) for row, spellings in groups]


def _single(row: FactRow, spellings: frozenset[str] | None, now: datetime) -> FactRow:
    if not spellings:
        return replace(row, single_spellings=None)
    valid_at = row.valid_at
    if valid_at is None:
        start = row.observed_at or now
        if row.invalid_at is None or row.invalid_at > start:
            valid_at = start
    return replace(row, single_spellings=tuple(sorted(spellings)), valid_at=valid_at)


Timeline = tuple[str, str, tuple[str, ...]]  # (subject type, normalised name, spellings)


async def close(tx: ScopedTx, rows: Sequence[FactRow], now: datetime) -> list[reconcile.Closure]:
    """Compute and write the closures of every timeline the batch touched."""
    return await close_timelines(
        tx,
        [(r.subject_type, r.subject_norm, r.single_spellings) for r in rows if r.single_spellings],
        now,
    )


async def close_stored(
    tx: ScopedTx, rules: Rules, fact_ids: Sequence[str], now: datetime
) -> list[reconcile.Closure]:
    """``close`` for stored facts (an import's): the timelines of those whose predicate is
    single-valued for their subject's type. The caller holds the scope's fact lock."""
    if rules.ontology is None or not fact_ids:
        return []
    found = await tx.run(q.FACT_TIMELINE_KEYS, {"ids": list(fact_ids)})
    keys = []
    for r in found:
        spellings = rules.ontology.single_spellings(r["subject_type"], r["predicate"])
        if spellings:
            keys.append((r["subject_type"], r["subject_norm"], tuple(sorted(spellings))))
    return await close_timelines(tx, keys, now)


async def close_timelines(
    tx: ScopedTx, wanted: Sequence[Timeline], now: datetime
) -> list[reconcile.Closure]:
    """Compute and write the closures of the ``wanted`` timelines."""
    keys = {key: i for i, key in enumerate(dict.fromkeys(wanted))}
    if not keys:
        return []
    groups = [
        {"group": i, "subject_type": t, "subject_norm": n, "spellings": list(s)}
        for (t, n, s), i in keys.items()
    ]
    found = await tx.run(q.CLOSURE_TIMELINES, {"groups": groups})
    timelines: dict[int, list[reconcile.Stated]] = {}
    current: dict[str, datetime | None] = {}  # each fact's stored held_from
    for r in found:
        timelines.setdefault(r["group"], []).append(_stated(r))
        current[r["id"]] = r["held_from"]
    done = [c for timeline in timelines.values() for c in reconcile.closures(timeline)]
    held = [
        {"id": fact_id, "held_from": start}
        for timeline in timelines.values()
        for fact_id, start in reconcile.held_from(timeline).items()
        if (stored := current[fact_id]) is None or start > stored
    ]
    if held:
        await tx.run(q.HOLD_FACTS_FROM, {"held": held, "now": now})
    if done:
        closures = [
            {"id": c.fact_id, "by_id": c.by_id, "invalid_at": c.invalid_at, "reason": c.reason}
            for c in done
        ]
        await tx.run(q.CLOSE_FACTS, {"closures": closures, "now": now, "open_end": OPEN_END})
    return done


def _stated(r: Row) -> reconcile.Stated:
    return reconcile.Stated(
        id=r["id"],
        object_key=(r["object_type"], r["object_norm"]),
        start=r["start"],
        observed_at=r["observed_at"],
        natural_key=r["natural_key"],
        end=r["end"],
        stated_end=None if r["stated_end"] == OPEN_END else r["stated_end"],
        start_stated=r["valid_at"] is not None,
    )
