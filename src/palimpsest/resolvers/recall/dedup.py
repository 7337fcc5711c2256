"""Recall's ``dedup`` (docs/reference/recall.md, Near-duplicate hits): one answer holds no two
hits whose embeddings are at least ``dedup`` apart in cosine.

The fused, boosted ranking is walked best first: a candidate as close as ``dedup`` to a hit
already kept is dropped, and the kept hit's ``explain.duplicates`` names it, so each dropped
hit says which hit it duplicated. The walk stops once ``top_k`` hits are kept. Embeddings are
read per scope, in the recall's own transaction; hits of different scopes are compared too
(their vectors never leave the server).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from palimpsest.cypher import dedup as q
from palimpsest.cypher.driver.executor import Tx
from palimpsest.domain.ranking import dedup
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import ScopeRef
from palimpsest.resolvers.recall.hits import Duplicate, Hit


async def drop_duplicates(
    tx: Tx, refs: Sequence[ScopeRef], ranked: Sequence[Hit], top_k: int, threshold: float
) -> list[Hit]:
    """The best ``top_k`` of ``ranked`` with near-duplicates dropped (kept hits name them)."""
    vectors: dict[tuple[str, str, str], list[float]] = {}
    for ref in refs:
        mine = [h for h in ranked if h.scope == ref.scope]
        if not mine:
            continue
        params = {
            kind: [h.id for h in mine if h.kind is source]
            for kind, source in (
                ("facts", pure.Source.FACTS),
                ("notes", pure.Source.NOTES),
                ("chunks", pure.Source.DOCUMENTS),
            )
        }
        [row] = await tx.scoped(ref).run(q.HIT_EMBEDDINGS, params)
        for column, source in (
            ("facts", pure.Source.FACTS),
            ("notes", pure.Source.NOTES),
            ("chunks", pure.Source.DOCUMENTS),
        ):
            for one in row[column]:
                if one["embedding"] is not None:
                    key = (source.value, ref.scope.value, one["id"])
                    vectors[key] = list(one["embedding"])
    kept: list[Hit] = []
    named: dict[int, list[Duplicate]] = {}
    for hit in ranked:
        if len(kept) == top_k:
            break
        mine_v = vectors.get((hit.kind.value, hit.scope.value, hit.id))
        twin = None
        if mine_v is not None:
            for k in kept:
                other = vectors.get((k.kind.value, k.scope.value, k.id))
                if other is not None:
                    cos = dedup.cosine(mine_v, other)
                    if dedup.close_enough(cos, threshold):
                        twin = (k, cos)
                        break
        if twin is None:
            kept.append(hit)
            continue
        named.setdefault(id(twin[0]), []).append(
            Duplicate(hit.kind, hit.scope, hit.id, twin[1], hit.score)
        )
    return [
        replace(hit, explain=replace(hit.explain, duplicates=named[id(hit)]))
        if id(hit) in named and hit.explain is not None
        else hit
        for hit in kept
    ]
