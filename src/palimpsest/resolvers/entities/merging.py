"""Merging entities (docs/reference/facts.md, Entities): recorded, and reversed exactly.

``merge`` moves the facts and mentions of ``merge_ids`` onto ``keep_id``, gives the kept
entity their names as aliases (so a later write of a merged spelling means the kept entity),
sets the merged entities aside and records the merge, in one transaction under the scope's
fact lock (no fact write interleaves). ``unmerge`` restores each merged entity, each end of a
fact and each mention the merge moved, and the kept entity's aliases, as they were. Whoever
may write facts in the scope may merge there. A foreign id answers as a missing one.
"""

from __future__ import annotations

from typing import Any

from palimpsest.cypher import entities as q
from palimpsest.cypher import facts as fq
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.names import fold, normalise
from palimpsest.errors import Conflict, InvalidArgument, NotFound
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.common import check_id, new_id, writer_params
from palimpsest.resolvers.facts.decode import entity_from
from palimpsest.resolvers.services import Services
from palimpsest.schema.models import Entity, EntityMerge

MAX_MERGE = 50
MAX_LIST = 100


async def merge(
    svc: Services, who: Principal, scope: Scope, keep_id: str, merge_ids: list[str]
) -> tuple[Entity, str]:
    """Fold ``merge_ids`` into ``keep_id``; returns the kept entity and the merge's id."""
    ref = resolve_scope(who, scope)
    check_id(keep_id, "keepId")
    for mid in merge_ids:
        check_id(mid, "mergeIds")
    if not merge_ids or len(merge_ids) > MAX_MERGE:
        raise InvalidArgument(f"mergeIds must name 1-{MAX_MERGE} entities")
    if len(set(merge_ids)) != len(merge_ids):
        raise InvalidArgument("mergeIds names an entity twice")
    if keep_id in merge_ids:
        raise InvalidArgument("an entity cannot be merged into itself")
    merge_id = new_id()

    async def work(tx: ScopedTx) -> None:
        [lock] = await tx.run(fq.LOCK_SCOPE_FACTS, {"now": svc.clock()})
        rows = await tx.run(q.MERGE_ENTITIES_BY_ID, {"ids": [keep_id, *merge_ids]})
        found = {r["entity"]["id"]: r["entity"] for r in rows}
        if set(found) != {keep_id, *merge_ids}:
            raise NotFound("entity not found")
        kept = found[keep_id]
        others = sorted({found[m]["type"] for m in merge_ids} - {kept["type"]})
        if others:
            raise InvalidArgument(
                f"only entities of one type merge: {kept['type']!r} and {', '.join(others)}"
            )
        aliases = list(kept.get("aliases") or [])
        seen = {kept["normalized_name"], *(normalise(a) for a in aliases)}
        added: list[str] = []
        for mid in merge_ids:
            for name in (found[mid]["name"], *(found[mid].get("aliases") or ())):
                if normalise(name) not in seen:
                    seen.add(normalise(name))
                    added.append(name)
        ids = {"keep_id": keep_id, "merged_ids": merge_ids, "merge_id": merge_id}
        [facts] = await tx.run(q.MOVE_FACTS, ids)
        [mentions] = await tx.run(q.MOVE_MENTIONS, ids)
        await tx.run(
            q.RECORD_MERGE,
            {
                **ids,
                **writer_params(who),
                **alias_params(aliases + added),
                "added_aliases": added,
                "facts_moved": facts["moved"],
                "mentions_moved": mentions["moved"],
                "now": lock["now"],
            },
        )

    await svc.db.scoped(ref).write_tx(work)
    rows = await svc.db.scoped(ref).read(q.MERGE_ENTITIES_BY_ID, {"ids": [keep_id]})
    return entity_from(rows[0]["entity"], who), merge_id


async def unmerge(svc: Services, who: Principal, scope: Scope, merge_id: str) -> list[Entity]:
    """Reverse a merge; returns the kept entity, then the restored ones."""
    ref = resolve_scope(who, scope)
    check_id(merge_id, "mergeId")

    async def work(tx: ScopedTx) -> list[str]:
        [lock] = await tx.run(fq.LOCK_SCOPE_FACTS, {"now": svc.clock()})
        rows = await tx.run(q.LOCK_MERGE, {"merge_id": merge_id, "now": lock["now"]})
        if not rows:
            raise NotFound("merge not found")
        row = rows[0]
        record = row["merge"]
        if record["undone_at"] is not None:
            raise Conflict("the merge was already undone")
        if not row["kept"]:
            raise Conflict(
                "the kept entity was itself merged (or erased) since: undo that merge first"
            )
        if row["taken"]:
            raise Conflict("an entity has since been written under a merged entity's name")
        ids = {"keep_id": record["keep_id"], "merge_id": merge_id}
        await tx.run(q.RESTORE_ENTITIES, ids)
        await tx.run(q.RESTORE_FACTS, ids)
        await tx.run(q.RESTORE_MENTIONS, ids)
        added = set(record["added_aliases"] or ())
        left = [a for a in row["kept_aliases"] or () if a not in added]
        await tx.run(q.UNDO_MERGE, {**ids, **alias_params(left), "now": lock["now"]})
        return [record["keep_id"], *record["merged_ids"]]

    ids = await svc.db.scoped(ref).write_tx(work)
    rows = await svc.db.scoped(ref).read(q.MERGE_ENTITIES_BY_ID, {"ids": ids})
    found = {r["entity"]["id"]: entity_from(r["entity"], who) for r in rows}
    return [found[i] for i in ids if i in found]


async def merges(
    svc: Services, who: Principal, scope: Scope, entity_id: str, limit: int
) -> list[EntityMerge]:
    """The merges that kept or folded in ``entity_id``, newest first."""
    ref = resolve_scope(who, scope)
    check_id(entity_id, "entityId")
    if not 1 <= limit <= MAX_LIST:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIST}")
    rows = await svc.db.scoped(ref).read(q.LIST_MERGES, {"keep_id": entity_id, "limit": limit})
    return [_merge(r["merge"]) for r in rows]


def _merge(r: Row) -> EntityMerge:
    return EntityMerge(
        id=r["id"],
        keep_id=r["keep_id"],
        merged_ids=tuple(r["merged_ids"]),
        added_aliases=tuple(r["added_aliases"] or ()),
        facts_moved=r["facts_moved"],
        mentions_moved=r["mentions_moved"],
        created_at=r["created_at"],
        undone_at=r["undone_at"],
    )


def alias_params(aliases: list[str]) -> dict[str, Any]:
    """An entity's aliases with the forms writes and mentions find it by (null when none)."""
    if not aliases:
        return {"aliases": None, "alias_norms": None, "alias_keys": None}
    return {
        "aliases": aliases,
        "alias_norms": sorted({normalise(a) for a in aliases}),
        "alias_keys": sorted({fold(a) for a in aliases} - {""}),
    }
