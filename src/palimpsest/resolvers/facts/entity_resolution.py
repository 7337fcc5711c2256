"""Entities (docs/reference/facts.md, Entities): one entity per name on write, and duplicates.

``resolve`` runs in every fact write (``facts.write_batch``), under the scope's fact lock, so
that two writers of two spellings of one new name cannot make two entities: a subject or
object name means the stored entity of the same type whose normalised name is the same, else
whose folded name (``schema.names.fold``: case, punctuation, whitespace) is the same, else
one of whose aliases folds the same (``setEntityAliases``, or the names a merge folded in).
A literal value (``objectValue``) is only ever itself.

``duplicates`` lists entity pairs of one type that likely name one thing: a shared folded
name (entities written before folding, or by another path), a name that is the other's alias,
or names within ``MIN_SIMILARITY`` edit similarity (1 - Levenshtein distance / longer name's
length, over folded names), compared by sorted neighbourhood (each name with the ``WINDOW``
names next to it in folded order and in reversed-folded order). It reads at most ``MAX_SCAN``
entities of the scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from palimpsest import paging
from palimpsest.cypher import entities as q
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.names import fold
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.facts.decode import entity_from
from palimpsest.resolvers.facts.inputs import VALUE_TYPE
from palimpsest.resolvers.services import Services
from palimpsest.schema.fact_rows import FactRow
from palimpsest.schema.models import EntityDuplicate

MAX_SCAN = 5000
MAX_LIMIT = 200
WINDOW = 12
MIN_SIMILARITY = 0.8
LIST_NAME = "entityDuplicates"
_POSITION = (paging.Part.TEXT,) * 5


@dataclass(frozen=True, slots=True)
class Proof:
    """What the statement that resolved a batch's names proved absent from the scope, so the
    write can skip the reads that would find nothing (``facts.write_batch``).

    ``unstored_keys``: natural keys no stored fact holds (a key among them cannot conflict);
    ``new_subjects``: the indexes of rows whose subject no stored entity is (no stored fact
    can near-duplicate them). Empty when nothing was proved: the reads run as before."""

    unstored_keys: frozenset[str] = frozenset()
    new_subjects: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Resolved:
    """A batch's rows resolved under the scope's fact lock: the rows, what the statement
    proved (``Proof``), and the lock's time (never before the scope's last closing write),
    which a closure in the same transaction writes at instead of locking again."""

    rows: list[FactRow]
    proof: Proof
    locked_at: datetime


async def resolve(tx: ScopedTx, svc: Services, rows: Sequence[FactRow]) -> list[FactRow]:
    """The rows, each subject and object (``*_norm``) pointed at the entity its name means."""
    return (await resolve_proving(tx, svc, rows)).rows


async def resolve_proving(tx: ScopedTx, svc: Services, rows: Sequence[FactRow]) -> Resolved:
    """``resolve``, what its statement proved absent (``Proof``) and the lock's time."""
    names: list[dict[str, Any]] = []
    for row in rows:
        for end in ("subject", "object"):
            n = _name_of(row, end)
            if n is not None:
                names.append({"i": len(names), **n})
    keys = sorted({r.natural_key for r in rows})
    params = {"now": svc.clock(), "names": names, "keys": keys}
    found = await tx.run(q.LOCK_RESOLVE_ENTITIES, params)
    stored: dict[int, str] = {}
    held: list[str] | None = None  # the batch's keys a stored fact holds, when read
    locked_at: datetime | None = None
    for r in found:
        if r["i"] is None:
            held, locked_at = r["stored_keys"], r["now"]
        else:
            stored.setdefault(r["i"], r["norm"])  # best rank first, then lowest id
    first: dict[tuple[str, str], str] = {}  # a new name: the batch's first spelling of it
    meant = iter(
        [stored.get(n["i"]) or first.setdefault((n["type"], n["key"]), n["norm"]) for n in names]
    )
    out, new_subjects, at = [], set(), 0
    for row in rows:
        if row.subject_key is not None:
            if at not in stored:
                new_subjects.add(row.index)
            row, at = replace(row, subject_norm=next(meant)), at + 1
        if row.object_key is not None:
            row, at = replace(row, object_norm=next(meant)), at + 1
        out.append(row)
    assert locked_at is not None  # the lock's row comes whatever the batch holds
    if held is None:  # not read: nothing proved
        return Resolved(out, Proof(), locked_at)
    proof = Proof(frozenset(keys) - frozenset(held), frozenset(new_subjects))
    return Resolved(out, proof, locked_at)


def _name_of(row: FactRow, end: str) -> dict[str, Any] | None:
    """The ``RESOLVE_ENTITIES`` name of the row's subject or object; None for a literal."""
    if end == "subject":
        key, etype, norm = row.subject_key, row.subject_type, row.subject_norm
    else:
        key, etype, norm = row.object_key, row.object_type, row.object_norm
    return None if key is None else {"type": etype, "norm": norm, "key": key}


@dataclass(frozen=True, slots=True)
class _Named:
    row: Row
    key: str
    aliases: frozenset[str]

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def norm(self) -> str:
        return str(self.row["normalized_name"])


async def duplicates(
    svc: Services, who: Principal, scope: Scope, limit: int, after: str | None
) -> paging.Page[EntityDuplicate]:
    """Likely duplicate pairs in (type, names, ids) order, paged."""
    ref = resolve_scope(who, scope)
    paging.check_limit(limit, MAX_LIMIT)
    position = paging.decode(after, LIST_NAME, _POSITION)
    rows = await svc.db.scoped(ref).read(
        q.ENTITY_NAMES, {"value_type": VALUE_TYPE, "cap": MAX_SCAN}
    )
    by_type: dict[str, list[_Named]] = {}
    for r in rows:
        e = r["entity"]
        named = _Named(e, fold(e["name"]), frozenset(e.get("alias_keys") or ()))
        by_type.setdefault(e["type"], []).append(named)
    pairs = sorted(p for group in by_type.values() for p in _pairs(group))
    if position is not None:
        pairs = [p for p in pairs if list(p[0]) > position]
    found = [
        EntityDuplicate(entity_from(a.row, who), entity_from(b.row, who), reason, figure)
        for (_, a, b, reason, figure) in pairs[: limit + 1]
    ]
    return paging.page(found, limit, LIST_NAME, _position)


def _position(d: EntityDuplicate) -> list[str]:
    return [d.a.type, fold(d.a.name), fold(d.b.name), d.a.id, d.b.id]


def _pairs(group: list[_Named]) -> list[tuple[tuple[str, ...], _Named, _Named, str, float]]:
    found: dict[tuple[str, str], tuple[_Named, _Named, str, float]] = {}

    def add(x: _Named, y: _Named, reason: str, figure: float) -> None:
        a, b = sorted((x, y), key=lambda n: (n.key, n.id))
        if a.id != b.id:
            found.setdefault((a.id, b.id), (a, b, reason, figure))

    by_key: dict[str, list[_Named]] = {}
    for n in group:
        by_key.setdefault(n.key, []).append(n)
    for same in by_key.values():
        for other in same[1:]:
            add(same[0], other, "SAME_NAME", 1.0)
    for n in group:
        for alias in n.aliases:
            for other in by_key.get(alias, []):
                add(n, other, "ALIAS", 1.0)
    for order in (lambda n: n.key, lambda n: n.key[::-1]):
        ranked = sorted(group, key=order)
        for i, x in enumerate(ranked):
            for y in ranked[i + 1 : i + 1 + WINDOW]:
                figure = similarity(x.key, y.key)
                if x.key != y.key and figure >= MIN_SIMILARITY:
                    add(x, y, "EDIT_DISTANCE", round(figure, 4))
    return [
        ((a.row["type"], a.key, b.key, a.id, b.id), a, b, r, f) for a, b, r, f in found.values()
    ]


def similarity(a: str, b: str) -> float:
    """1 - Levenshtein distance / the longer length (1.0 for two empty strings)."""
    longest = max(len(a), len(b))
    if longest == 0:
        return 1.0
    # A larger distance cannot qualify. Rounded, not cut: 1 - 0.8 is 0.19999999999999996, and
    # int() of 15 times that is 2, which passed a distance-3 pair without measuring it.
    budget = int(round((1 - MIN_SIMILARITY) * longest, 9))
    if abs(len(a) - len(b)) > budget:
        return 1 - abs(len(a) - len(b)) / longest
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return 1 - previous[-1] / longest
