"""Sessions as context (docs/reference/recall.md, Levers: the session prior): a chunk's
document (a conversation's session) is a unit of evidence.

After fusion and the boosts, the chunk candidates of each scope are grouped by their document.
A document's support is the sum of its candidates' fused scores (several turns of one session
matching the question say more than one); the documents of a scope are ranked by it, and each
chunk gains one more Reciprocal Rank Fusion term, ``weight / (k + rank of its document)``,
exactly as a leg's list would add (the same ``k``, no new constant but the weight). A document
ranked alone by one chunk adds the least; the documents' ranks are per scope, from the scope's
own candidates, so nothing from another scope reaches a score. A soft preference: it reorders
candidates, never adds or drops one. The chunks' documents are read in the recall's own
transaction, one statement per scope (``recall_controls.chunk_documents``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from palimpsest.cypher.driver.executor import Tx
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import ScopeRef
from palimpsest.resolvers.recall.controls import chunk_documents
from palimpsest.resolvers.recall.hits import Hit, LegPart

SESSION = "session"  # the leg name of the prior in ``explain.legs``


def document_ranks(
    hits: Sequence[Hit], documents: Mapping[tuple[str, str], str]
) -> dict[tuple[str, str], tuple[int, float]]:
    """(scope, document) -> (its rank among its scope's documents, its support), support the
    sum of its chunk candidates' fused scores; ties by first appearance in ``hits``."""
    support: dict[tuple[str, str], float] = {}
    for hit in hits:
        doc = documents.get((hit.scope.value, hit.id))
        if doc is not None:
            fused = hit.explain.fused if hit.explain is not None else hit.score
            key = (hit.scope.value, doc)
            support[key] = support.get(key, 0.0) + fused
    order = {key: i for i, key in enumerate(support)}
    ranks: dict[tuple[str, str], tuple[int, float]] = {}
    per_scope: dict[str, int] = {}
    for key in sorted(support, key=lambda d: (-support[d], order[d])):
        rank = per_scope.get(key[0], 0) + 1
        per_scope[key[0]] = rank
        ranks[key] = (rank, support[key])
    return ranks


def add_prior(
    hits: Sequence[Hit], documents: Mapping[tuple[str, str], str], weight: float, k: int
) -> list[Hit]:
    """Each chunk candidate gains ``weight / (k + rank of its document)`` (in ``explain``).
    The hits with their gains, in the same order."""
    ranks = document_ranks(hits, documents)
    out: list[Hit] = []
    for hit in hits:
        doc = documents.get((hit.scope.value, hit.id))
        if doc is None:
            out.append(hit)
            continue
        rank, support = ranks[(hit.scope.value, doc)]
        gain = weight / (k + rank)
        explain = hit.explain
        if explain is not None:
            part = LegPart(SESSION, rank, gain, support, weight=weight)
            explain = replace(explain, legs=[*explain.legs, part])
        out.append(replace(hit, score=hit.score + gain, explain=explain))
    return out


async def apply(
    tx: Tx, refs: Sequence[ScopeRef], hits: list[Hit], weight: float, k: int, prefer: bool
) -> list[Hit]:
    """The prior over the fused, boosted candidates, best first again (stable on ties); with
    ``prefer`` (a ``when`` window that prefers), in-window, undated, out-of-window first."""
    if weight <= 0 or not any(h.kind is pure.Source.DOCUMENTS for h in hits):
        return hits
    hits = add_prior(hits, await chunk_documents(tx, refs, hits), weight, k)

    def place(h: Hit) -> int:
        return 0 if not prefer or h.in_window else 1 if h.in_window is None else 2

    return sorted(hits, key=lambda h: (place(h), -h.score))
