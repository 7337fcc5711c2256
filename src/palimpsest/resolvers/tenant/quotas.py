"""Quotas on every plane (docs/reference/quotas.md): what one scope may store, checked inside
the write's own transaction, after the write, so a refusal rolls everything back.

A counting writer calls ``admit(tx, settings, {plane: created})`` with what it just created.
The scope's counters (``cypher/quotas.py``: upper bounds on the ``:Scope`` node, under its
write lock) decide: a bound that stays under the limit is raised and nothing is counted;
otherwise the plane is counted exactly (this transaction's rows included) and the write is
refused with ``QUOTA_EXCEEDED`` when that count passes the limit. A limit below what a scope
already holds refuses every write that adds to the plane and never removes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher import quotas as q
from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.ranking.fulltext import StatsDelta
from palimpsest.errors import QuotaExceeded
from palimpsest.resolvers import term_index
from palimpsest.resolvers.services import utc_now
from palimpsest.schema.fact_rows import FactRow


class Plane(StrEnum):
    """A counted plane; the value is its name in refusals and in ``usage``."""

    NOTES = "notes"
    DOCUMENT_BYTES = "documentBytes"
    CHUNKS = "chunks"
    FACTS = "facts"
    ENTITIES = "entities"
    PENDING_SPANS = "pendingSpans"
    VERSIONS = "versions"


@dataclass(frozen=True, slots=True)
class _Counted:
    counter: str  # the :Scope property (cypher/quotas.py COUNTERS)
    setting: str  # the field of Settings.limits holding the limit (0: off)
    exact: Statement


PLANES: Mapping[Plane, _Counted] = {
    Plane.NOTES: _Counted("quota_notes", "max_scope_notes", q.COUNT_NOTES),
    Plane.DOCUMENT_BYTES: _Counted(
        "quota_document_bytes", "max_scope_document_bytes", q.SUM_DOCUMENT_BYTES
    ),
    Plane.CHUNKS: _Counted("quota_chunks", "max_scope_chunks", q.COUNT_CHUNKS),
    Plane.FACTS: _Counted("quota_facts", "max_scope_facts", q.COUNT_FACTS),
    Plane.ENTITIES: _Counted("quota_entities", "max_scope_entities", q.COUNT_ENTITIES),
    Plane.PENDING_SPANS: _Counted(
        "quota_pending_spans", "max_scope_pending_spans", q.COUNT_PENDING_SPANS
    ),
    Plane.VERSIONS: _Counted("quota_versions", "max_note_versions", q.COUNT_VERSIONS),
}
assert {c.counter for c in PLANES.values()} == set(q.COUNTERS)

_EXACT_PARAMS = {
    "done": "done"
}  # resolvers/cycle/harvesting.py Status.DONE (it imports this module)


def limit_of(settings: Settings, plane: Plane) -> int:
    limit: int = getattr(settings.limits, PLANES[plane].setting)
    return limit


def setting_name(plane: Plane) -> str:
    return "PALIMPSEST_" + PLANES[plane].setting.upper()


async def exact(tx: ScopedTx, plane: Plane) -> int:
    [row] = await tx.run(PLANES[plane].exact, _EXACT_PARAMS)
    return int(row["used"])


async def admit(
    tx: ScopedTx,
    settings: Settings,
    created: Mapping[Plane, int],
    *,
    exempt: frozenset[Plane] = frozenset(),
) -> None:
    """After a write in ``tx`` that created ``created`` rows (or bytes) per plane: raise the
    scope's counters, or refuse the write when a plane is over its limit. The planes in
    ``exempt`` are counted but never refuse (a deletion's tombstone: deleting is always
    possible, docs/reference/quotas.md)."""
    raise_ = raises(settings, created, exempt)
    if not raise_:
        return
    [bounds] = await tx.run(q.RAISE_COUNTERS, {"now": utc_now(), "added": raise_})
    await settle(tx, settings, created, bounds, exempt)


def raises(
    settings: Settings, created: Mapping[Plane, int], exempt: frozenset[Plane] = frozenset()
) -> list[dict[str, object]]:
    """The ``$added`` of ``RAISE_QUOTA_COUNTERS`` (or of a write statement that raises the
    counters itself, cypher/quotas.py ``RAISE``) for ``created``; an exempt plane's limit is
    given as 0 (none)."""
    return [
        {"counter": PLANES[p].counter, "n": n, "limit": _limit(settings, p, exempt)}
        for p, n in sorted(created.items())
        if n > 0
    ]


def _limit(settings: Settings, plane: Plane, exempt: frozenset[Plane]) -> int:
    return 0 if plane in exempt else limit_of(settings, plane)


async def settle(
    tx: ScopedTx,
    settings: Settings,
    created: Mapping[Plane, int],
    bounds: Row,
    exempt: frozenset[Plane] = frozenset(),
) -> None:
    """After the counters' raise (``bounds``: its ``fits`` and ``BOUNDS`` columns): done when
    it fitted; otherwise count the planes whose bound cannot decide, refuse a write over a
    limit (never on an ``exempt`` plane), and set the counters."""
    if bounds["fits"]:
        return  # every bound known and under its limit: raised in the same statement
    counters: dict[str, int] = {}
    for plane, n in created.items():
        if n > 0:
            limit = _limit(settings, plane, exempt)
            counters[PLANES[plane].counter] = await _admit_one(tx, plane, n, bounds, limit)
    await tx.run(q.SET_COUNTERS, {"counters": counters})


async def admit_facts(
    tx: ScopedTx, settings: Settings, rows: Sequence[FactRow], facts: int, now: datetime
) -> None:
    """After ``ASSERT_FACTS``: the batch's new facts, and the entities it created (those of
    its freshly minted ids stamped with this write's time)."""
    ids = sorted({i for r in rows for i in (r.subject_id, r.object_id) if i})
    entities = 0
    if ids:
        [row] = await tx.run(q.CREATED_ENTITIES, {"ids": ids, "now": now})
        entities = int(row["created"])
    await admit(tx, settings, {Plane.FACTS: facts, Plane.ENTITIES: entities})


def fact_counting(
    settings: Settings, rows: Sequence[FactRow], fresh: Sequence[dict[str, Any]]
) -> dict[str, Any]:
    """The parameters by which ``ASSERT_FACTS`` counts what it created itself: the term
    statistics of the ``fresh`` rows' stored fields (the facts the resolver expects created),
    the batch's minted entity ids, and the facts' and entities' counters and limits."""
    return {
        **term_index.change_params(settings, "fact", term_index.added(fresh)),
        "minted": _minted(rows),
        "fact_counter": PLANES[Plane.FACTS].counter,
        "fact_limit": limit_of(settings, Plane.FACTS),
        "entity_counter": PLANES[Plane.ENTITIES].counter,
        "entity_limit": limit_of(settings, Plane.ENTITIES),
    }


async def settle_written_facts(
    tx: ScopedTx, settings: Settings, rows: Sequence[FactRow], written: Sequence[Row], facts: int
) -> None:
    """After an ``ASSERT_FACTS`` that counted what it created (``counted``): done when the
    counters fitted, else ``settle`` as after ``APPLY_TERMS_RAISE_COUNTERS``."""
    await settle(tx, settings, _created(rows, written, facts), written[0])


def _minted(rows: Sequence[FactRow]) -> list[str]:
    return sorted({i for r in rows for i in (r.subject_id, r.object_id) if i})


def _created(rows: Sequence[FactRow], written: Sequence[Row], facts: int) -> dict[Plane, int]:
    """The facts and the entities a batch created: an entity is new when ``ASSERT_FACTS``
    (its ``written`` rows) created it with one of the batch's minted ids."""
    made = {r[end]["id"] for r in written for end in ("subject", "object") if r[f"{end}_new"]}
    return {Plane.FACTS: facts, Plane.ENTITIES: len(made & set(_minted(rows)))}


async def admit_written_facts(
    tx: ScopedTx,
    settings: Settings,
    rows: Sequence[FactRow],
    written: Sequence[Row],
    facts: int,
    delta: StatsDelta,
) -> None:
    """``admit_facts`` and the batch's term statistics (``delta``) in one statement: an
    entity is new when ``ASSERT_FACTS`` (its ``written`` rows) created it with one of the
    batch's minted ids, as ``CREATED_QUOTA_ENTITIES`` counts."""
    created = _created(rows, written, facts)
    params = term_index.change_params(settings, "fact", delta)
    added = raises(settings, created)
    if params["changes"] or added:
        [bounds] = await tx.run(q.APPLY_TERMS_RAISE_COUNTERS, {**params, "added": added})
        await settle(tx, settings, created, bounds)


async def _admit_one(tx: ScopedTx, plane: Plane, added: int, bounds: Row, limit: int) -> int:
    bound = bounds[PLANES[plane].counter]
    after = None if bound is None else int(bound) + added
    if after is not None and (not limit or after <= limit):
        return after
    used_after = await exact(tx, plane)  # this transaction's rows included
    if limit and used_after > limit:
        usage = max(used_after - added, 0)
        raise QuotaExceeded(
            f"scope {tx.ref.scope.value} may hold at most {limit} {_unit(plane)}: it holds "
            f"{usage}, and this write would take it to {used_after}; nothing was written",
            plane=plane.value,
            limit=limit,
            setting=setting_name(plane),
            usage=usage,
            after=used_after,
        )
    return used_after


def _unit(plane: Plane) -> str:
    return {
        Plane.NOTES: "notes",
        Plane.DOCUMENT_BYTES: "bytes of documents",
        Plane.CHUNKS: "document chunks",
        Plane.FACTS: "facts",
        Plane.ENTITIES: "entities",
        Plane.PENDING_SPANS: "pending spans",
        Plane.VERSIONS: "versions (past note versions and tombstones, document revisions, "
        "closed chunk versions)",
    }[plane]
