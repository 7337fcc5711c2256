"""The many-tenants dataset's plan (``bench recall-latency --tenants N``): pure, no I/O.

``N`` tenants, one USER scope each, of 50-500 recallable rows (triangular, mode 200: a mean
of 250, so 10,000 tenants hold about 2.5M rows), each size a multiple of ``STEP`` so that
every size class has one template tenant written through the product's writers and its other
tenants are copies of it (``tenant_clone``). A tenant's rows split in fixed shares into
document chunks, conversation turns, notes and facts (``RowMix``). The measured tenant is one
more tenant of ``TARGET_ROWS`` rows, the same in the loaded and in the empty database.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass

MIN_ROWS, MODE_ROWS, MAX_ROWS = 50, 200, 500
STEP = 50  # sizes are multiples of this: one template per size class
TARGET_ROWS = 200
# Shares of a tenant's rows by kind (chunks, turns, notes; facts take what is left).
CHUNK_SHARE, TURN_SHARE, NOTE_SHARE = 0.5, 0.2, 0.2
TARGET_TENANT = "bench-tenants-target"
USER = "u"


@dataclass(frozen=True, slots=True)
class RowMix:
    """How many rows of each kind a tenant of ``rows`` rows holds."""

    chunks: int
    turns: int
    notes: int
    facts: int

    @property
    def rows(self) -> int:
        return self.chunks + self.turns + self.notes + self.facts

    @classmethod
    def of(cls, rows: int) -> RowMix:
        if rows < 4:
            raise ValueError("a tenant holds at least 4 rows (one of each kind)")
        chunks = max(1, round(rows * CHUNK_SHARE))
        turns = max(1, round(rows * TURN_SHARE))
        notes = max(1, round(rows * NOTE_SHARE))
        return cls(chunks, turns, notes, rows - chunks - turns - notes)


@dataclass(frozen=True, slots=True)
class TenantPlan:
    """One tenant: its name, its rows, and whether it is its size class's template (written
    through the product's writers) or a copy of that template."""

    tenant: str
    rows: int
    template: bool

    @property
    def mix(self) -> RowMix:
        return RowMix.of(self.rows)


def tenant_name(count: int, index: int) -> str:
    """Tenants of a plan are named by its size, so plans of other sizes never share one."""
    return f"bench-tenants-{count}-{index:05d}"


def tenant_sizes(count: int, seed: str = "tenants") -> list[int]:
    """``count`` sizes, each a multiple of ``STEP`` in [MIN_ROWS, MAX_ROWS], triangular with
    mode ``MODE_ROWS``; they depend only on ``count`` and ``seed``."""
    if count < 1:
        raise ValueError("count must be positive")
    rng = random.Random(f"{seed}-{count}")
    out = []
    for _ in range(count):
        raw = rng.triangular(MIN_ROWS, MAX_ROWS, MODE_ROWS)
        out.append(min(MAX_ROWS, max(MIN_ROWS, round(raw / STEP) * STEP)))
    return out


def tenant_plan(count: int) -> list[TenantPlan]:
    """The plan of ``count`` tenants: the first tenant of each size is its class's template."""
    seen: set[int] = set()
    plans = []
    for i, rows in enumerate(tenant_sizes(count)):
        plans.append(TenantPlan(tenant_name(count, i), rows, template=rows not in seen))
        seen.add(rows)
    return plans


def load_order(plans: Sequence[TenantPlan]) -> list[TenantPlan]:
    """Templates first (a copy needs its template), then the copies in plan order."""
    return [p for p in plans if p.template] + [p for p in plans if not p.template]


def target_plan() -> TenantPlan:
    """The measured tenant: written through the product's writers in both databases."""
    return TenantPlan(TARGET_TENANT, TARGET_ROWS, template=True)


def total_rows(plans: Sequence[TenantPlan]) -> int:
    return sum(p.rows for p in plans)
