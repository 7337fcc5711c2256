"""The newer statement first (docs/reference/recall.md, Levers): of two chunk hits that speak
of the same matter, the later told ranks above the earlier (``domain/ranking/newer``).

It reorders the hits recall is about to answer (the top-k, after the controls and ``dedup``),
never adds or drops one, so recall@k is unchanged by it; only hits at most ``newer.SPAN``
places apart are reordered. A moved hit's ``explain.newerThan`` names the hit it was placed
above and their cosine. The chunks' embeddings and times are read
per scope in the recall's own transaction (``cypher/recall_newer``). Facts need no such step:
a superseded fact is retired by the fact write itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from palimpsest.cypher import recall_newer as q
from palimpsest.cypher.driver.executor import Row, Tx
from palimpsest.domain.documents.revisions import SEQ_GAP
from palimpsest.domain.ranking import fusion as pure
from palimpsest.domain.ranking import newer
from palimpsest.identity import ScopeRef
from palimpsest.resolvers.recall.hits import Hit, NewerThan

# How much of a hit's text is read for its speaker and its values: a revision states its
# figure near the start, and ten hits of long messages stay a small read.
TOLD_CHARS = 4000


async def apply(
    tx: Tx,
    refs: Sequence[ScopeRef],
    hits: list[Hit],
    threshold: float,
    top_k: int,
    revision: bool = True,
) -> list[Hit]:
    """``hits`` (best first) with the first ``top_k`` reordered newer first; ``threshold``
    the cosine at which two hits speak of one matter (0: off); ``revision``: only pairs
    whose later reads as a revision of the earlier (``newer.revises``)."""
    window = hits[:top_k]
    if threshold <= 0 or sum(h.kind is pure.Source.DOCUMENTS for h in window) < 2:
        return hits
    rows: dict[tuple[str, str], Row] = {}
    for ref in refs:
        ids = [h.id for h in window if h.scope == ref.scope and h.kind is pure.Source.DOCUMENTS]
        if ids:
            for found in await tx.scoped(ref).run(
                q.CHUNK_TOLD, {"ids": ids, "gap": SEQ_GAP, "chars": TOLD_CHARS}
            ):
                rows[(ref.scope.value, found["id"])] = found
    vectors: list[list[float] | None] = []
    told: list[newer.Told] = []
    for h in window:
        row = rows.get((h.scope.value, h.id))
        if row is None or h.kind is not pure.Source.DOCUMENTS:
            vectors.append(None)
            told.append(newer.Told(None, None))
            continue
        vectors.append(list(row["embedding"]) if row["embedding"] else None)
        text = row["text"] or ""
        told.append(
            newer.Told(
                observed=row["observed_at"],
                stored=row["stored_at"],
                document=f"{h.scope.value}\x1f{row['document_id']}",
                place=row["place"],
                speaker=newer.speaker_of(text) or h.speaker,
                values=newer.values_of(text),
            )
        )
    placed = newer.order(vectors, told, threshold, revision=revision)
    out: list[Hit] = []
    for p in placed:
        hit = window[p.index]
        if p.above is not None and p.cosine is not None and hit.explain is not None:
            was = window[p.above]
            moved = NewerThan(was.kind, was.scope, was.id, p.cosine)
            hit = replace(hit, explain=replace(hit.explain, newer_than=moved))
        out.append(hit)
    return out + hits[top_k:]
