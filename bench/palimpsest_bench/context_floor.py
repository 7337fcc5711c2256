"""``bench context-floor``: what ``context``'s floor on its hits (``minScore``) does to the
block, on LoCoMo's dev split (docs/notes/context.md). Tune on dev only.

The first ``conversations`` conversations are imported as ``recall_eval`` imports them (one
user per conversation, one document per session, one chunk per turn), in process with the
real model. For every ``stride``-th question of categories 1-4 (at most ``questions`` per
conversation) ``context`` is asked at ``budget`` tokens once per floor, and a packed line is
evidence when its chunk's turn is in the question's evidence. Per floor:

- ``precision``: evidence lines over packed lines, pooled over the questions;
- ``recall``: the mean share of a question's evidence turns packed, and ``any``: the share of
  questions with at least one evidence line;
- ``lines``: packed lines per question;
- ``unrelated_lines``: lines packed for the same questions asked in the next conversation's
  scope, where nothing is evidence (every line there is noise), and ``unrelated_empty``: the
  share of those blocks with no line at all.

The floor -1 keeps every hit with a cosine, and of the others (the vector pool missed them)
those the full-text leg ranked within 10: near the block as it was before the floor.
The imported documents are deleted at the end.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.resolvers.recall import context_block as ctx
from palimpsest.runtime import open_services
from palimpsest_bench.common import principal
from palimpsest_bench.recall_data import Dataset, Query, load_locomo
from palimpsest_bench.recall_ingest import erase, ingest

FLOORS = (-1.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
CATEGORIES = frozenset({"1", "2", "3", "4"})


@dataclass(slots=True)
class Tally:
    """One floor's counts over the questions asked."""

    lines: int = 0
    evidence_lines: int = 0
    recall_sum: float = 0.0
    any_found: int = 0
    questions: int = 0
    unrelated_lines: int = 0
    unrelated_empty: int = 0
    unrelated: int = 0

    def add(self, packed: Sequence[str], evidence: frozenset[str]) -> None:
        """``packed``: the units (turn ids) of the block's lines, in order."""
        found = [u for u in packed if u in evidence]
        self.questions += 1
        self.lines += len(packed)
        self.evidence_lines += len(found)
        self.recall_sum += len(set(found)) / len(evidence) if evidence else 0.0
        self.any_found += bool(found)

    def add_unrelated(self, packed: Sequence[str]) -> None:
        self.unrelated += 1
        self.unrelated_lines += len(packed)
        self.unrelated_empty += not packed

    def summary(self) -> dict[str, float]:
        n, u = max(self.questions, 1), max(self.unrelated, 1)
        return {
            "precision": round(self.evidence_lines / max(self.lines, 1), 4),
            "recall": round(self.recall_sum / n, 4),
            "any": round(self.any_found / n, 4),
            "lines": round(self.lines / n, 2),
            "unrelated_lines": round(self.unrelated_lines / u, 2),
            "unrelated_empty": round(self.unrelated_empty / u, 4),
        }


@dataclass(frozen=True, slots=True)
class Sample:
    """The conversations kept and the questions asked of each (with the scope to ask them in
    as unrelated questions: the next conversation's)."""

    data: Dataset
    asked: list[Query] = field(default_factory=list)
    elsewhere: dict[str, str] = field(default_factory=dict)  # owner -> another owner


def sample(ds: Dataset, conversations: int, questions: int, stride: int) -> Sample:
    owners = sorted({d.owner for d in ds.docs})[:conversations]
    kept = set(owners)
    asked: list[Query] = []
    for owner in owners:
        mine = [
            q for q in ds.queries if q.owner == owner and q.category in CATEGORIES and q.relevant
        ]
        asked += mine[::stride][:questions]
    data = replace(
        ds,
        docs=[d for d in ds.docs if d.owner in kept],
        queries=[q for q in ds.queries if q.owner in kept],
    )
    others = {o: owners[(i + 1) % len(owners)] for i, o in enumerate(owners)}
    return Sample(data, asked, others if len(owners) > 1 else {})


def units(block: ctx.ContextBlock, unit_of_chunk: Mapping[str, str]) -> list[str]:
    """The turn ids of a block's lines (a line of no imported chunk counts as noise: "")."""
    return [unit_of_chunk.get(i.id, "") for i in block.items]


def run(
    settings: Settings,
    data: Path,
    conversations: int = 2,
    questions: int = 50,
    stride: int = 3,
    budget: int = 2000,
    floors: Sequence[float] = FLOORS,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    return asyncio.run(_run(settings, data, conversations, questions, stride, budget, floors, say))


async def _run(
    settings: Settings,
    data: Path,
    conversations: int,
    questions: int,
    stride: int,
    budget: int,
    floors: Sequence[float],
    say: Callable[[str], None],
) -> dict[str, Any]:
    picked = sample(load_locomo(data), conversations, questions, stride)
    tenant = f"bench-floor-{uuid.uuid4().hex[:8]}"
    tallies = {f: Tally() for f in floors}
    async with open_services(settings) as svc:
        loaded = await ingest(svc, tenant, picked.data, say)
        try:
            say(f"{len(picked.asked)} questions x {len(floors)} floors, budget {budget}")
            for n, q in enumerate(picked.asked, start=1):
                for f in floors:
                    block = await ctx.context(
                        svc, principal(tenant, q.owner), Scope.USER, q.text, budget, min_score=f
                    )
                    tallies[f].add(units(block, loaded.unit_of_chunk), q.relevant)
                    other = picked.elsewhere.get(q.owner)
                    if other is not None:
                        block = await ctx.context(
                            svc, principal(tenant, other), Scope.USER, q.text, budget, min_score=f
                        )
                        tallies[f].add_unrelated(units(block, loaded.unit_of_chunk))
                if n % 10 == 0:
                    say(f"  {n}/{len(picked.asked)} questions")
        finally:
            await erase(svc, tenant, loaded)
    return {
        "bench": "context-floor",
        "conversations": conversations,
        "turns": loaded.chunks,
        "questions": len(picked.asked),
        "budget": budget,
        "floors": {str(f): tallies[f].summary() for f in floors},
    }
