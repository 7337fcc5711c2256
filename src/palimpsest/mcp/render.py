"""Resolver results as plain JSON for tool results (dates as RFC 3339, nulls left out)."""

from __future__ import annotations

from typing import Any

from palimpsest.domain.notes.values import plain
from palimpsest.resolvers.recall import Hit
from palimpsest.schema.models import Fact

__all__ = ["fact_json", "hit_json", "plain"]


def fact_json(fact: Fact) -> Any:
    return plain(fact)


def hit_json(hit: Hit) -> Any:
    # Field by field on purpose: the raw BM25 score is left out, as in GraphQL, because
    # Lucene computes it with index-wide statistics that carry a trace of other tenants' text.
    return plain(
        {
            "kind": hit.kind,
            "scope": hit.scope,
            "id": hit.id,
            "text": hit.text,
            "score": hit.score,
            "cosine": hit.cosine,
            "vector_rank": hit.vector_rank,
            "fulltext_rank": hit.fulltext_rank,
            "key": hit.key,
            "document_id": hit.document_id,
            "chunk_type": hit.chunk_type,
            "fact": hit.fact,
            "observed_at": hit.observed_at,
            "created_at": hit.created_at,
            "in_window": hit.in_window,
            "provenance": hit.provenance,
            # Hits recall's ``dedup`` dropped as near-duplicates of this one.
            "duplicates": [
                {"kind": d.kind, "scope": d.scope, "id": d.id, "cosine": d.cosine}
                for d in (hit.explain.duplicates if hit.explain else [])
            ],
            # What the per-call controls did (resolvers/recall/controls.py), as in `explain`.
            "floor": hit.explain.floor if hit.explain else None,
            "document_place": hit.explain.document_place if hit.explain else None,
            "boosts": {b.lever: b.factor for b in hit.explain.boosts} if hit.explain else {},
            "time_ranges": [
                {"start": r.start, "end": r.end}
                for r in (hit.explain.time_ranges if hit.explain else ())
            ],
            "form": hit.explain.form if hit.explain else None,
            # The hit the newer-first lever placed this one above (recall/newer.py).
            "newer_than": (
                {
                    "kind": hit.explain.newer_than.kind,
                    "scope": hit.explain.newer_than.scope,
                    "id": hit.explain.newer_than.id,
                    "cosine": hit.explain.newer_than.cosine,
                }
                if hit.explain and hit.explain.newer_than
                else None
            ),
        }
    )
