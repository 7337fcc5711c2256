"""Loading the many-tenants dataset (``bench recall-latency --tenants N``).

Templates first, through the product's writers (``tenant_write``), then the copies in bulk
(``tenant_clone``, ``COPY_BATCH_ROWS`` rows a transaction, ``COPY_CONCURRENCY`` in flight).
Kept between runs: a template is complete when its scope's fact counter reached its plan
(facts are written last); an incomplete one is erased and written again; copies present are
skipped (a copy is one transaction). The measured tenant is written the same way as a
template, in both databases.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from neo4j import AsyncDriver

from palimpsest.resolvers.services import Services
from palimpsest_bench import tenant_clone as clone
from palimpsest_bench.common import HashEmbedder
from palimpsest_bench.tenant_plan import TenantPlan, load_order, total_rows
from palimpsest_bench.tenant_write import write_tenant

Progress = Callable[[str], None]
COPY_BATCH_ROWS = 8_000  # nodes and relationships per copy transaction
COPY_CONCURRENCY = 2
PRESENT_CHUNK = 1000  # scopes asked about per statement
REPORT_SECONDS = 15

READ_FACTS_COUNTER = """
MATCH (s:Scope {scope_key: $key})
RETURN s.quota_facts AS facts
"""
ERASE_LABEL = """
MATCH (n:$($label) {scope_key: $key})
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
"""


def hashed(svc: Services) -> Services:
    """The services with ``HashEmbedder`` vectors (the dataset's synthetic vectors)."""
    return replace(svc, embedder=HashEmbedder(svc.embedder.model_name, svc.embedder.dimensions))


async def complete(driver: AsyncDriver, plan: TenantPlan) -> bool:
    """Whether a tenant written through the writers holds at least its planned facts."""
    records = (await driver.execute_query(READ_FACTS_COUNTER, key=clone.key_of(plan.tenant)))[0]
    return bool(records) and int(records[0]["facts"] or 0) >= plan.mix.facts


async def erase_tenant(driver: AsyncDriver, tenant: str) -> None:
    """Every node of the tenant's scope, whatever its label (a half-written template)."""
    labels = [r["label"] for r in (await driver.execute_query(clone.READ_LABELS))[0]]
    async with driver.session() as session:
        for label in labels:
            if label not in clone.SKIPPED_LABELS:
                await session.run(ERASE_LABEL, label=label, key=clone.key_of(tenant))


async def ensure_written(
    svc: Services, driver: AsyncDriver, plan: TenantPlan, say: Progress
) -> bool:
    """Write ``plan`` through the writers unless it is complete; True if it was written."""
    if await complete(driver, plan):
        return False
    say(f"  writing {plan.tenant} ({plan.rows} rows) through the product's writers")
    await erase_tenant(driver, plan.tenant)
    await write_tenant(svc, plan)
    return True


def copy_batches(copies: Sequence[TenantPlan], sizes: dict[int, int]) -> list[list[TenantPlan]]:
    """Copies grouped per template size class, about ``COPY_BATCH_ROWS`` rows a group; the
    groups ordered so that the tenants copied so far keep the plan's mix of sizes whenever
    a load stops (each class advances in step with its share of the rows)."""
    groups: list[tuple[float, list[TenantPlan]]] = []
    by_rows: dict[int, list[TenantPlan]] = {}
    for p in copies:
        by_rows.setdefault(p.rows, []).append(p)
    for rows, members in sorted(by_rows.items()):
        per = max(1, COPY_BATCH_ROWS // max(1, sizes[rows]))
        batches = [members[i : i + per] for i in range(0, len(members), per)]
        # A batch's place: the share of its class copied once it is done.
        groups += [((n + 1) / len(batches), b) for n, b in enumerate(batches)]
    return [b for _, b in sorted(groups, key=lambda g: (g[0], g[1][0].rows))]


@dataclass(slots=True)
class Copying:
    """Progress of the copies: counted by the workers, said every ``REPORT_SECONDS``."""

    todo: int
    say: Progress
    started: float = field(default_factory=time.perf_counter)
    tenants: int = 0
    graph_rows: int = 0
    rows: int = 0
    last: float = 0.0

    def done(self, batch: Sequence[TenantPlan], graph_rows: int) -> None:
        self.tenants += len(batch)
        self.rows += sum(p.rows for p in batch)
        self.graph_rows += graph_rows
        now = time.perf_counter()
        if now - self.last >= REPORT_SECONDS or self.tenants == self.todo:
            self.last = now
            rate = self.tenants / (now - self.started)
            self.say(
                f"  copied {self.tenants}/{self.todo} tenants ({rate:.1f} tenants/s, "
                f"{self.graph_rows / (now - self.started):.0f} graph rows/s, "
                f"~{(self.todo - self.tenants) / max(rate, 1e-9):.0f}s left)"
            )


async def missing_copies(driver: AsyncDriver, copies: Sequence[TenantPlan]) -> list[TenantPlan]:
    have: set[str] = set()
    for i in range(0, len(copies), PRESENT_CHUNK):
        have |= await clone.present(driver, [p.tenant for p in copies[i : i + PRESENT_CHUNK]])
    return [p for p in copies if p.tenant not in have]


async def copy_all(
    driver: AsyncDriver,
    shapes: dict[int, clone.Template],
    todo: Sequence[TenantPlan],
    progress: Copying,
    deadline: float | None,
) -> None:
    """Copy ``todo``, ``COPY_CONCURRENCY`` batches in flight, none started after
    ``deadline``."""
    work = iter(copy_batches(todo, {rows: t.size for rows, t in shapes.items()}))

    async def worker() -> None:
        for batch in work:  # one shared iterator: each batch goes to one worker
            if deadline is not None and time.perf_counter() > deadline:
                return
            template = shapes[batch[0].rows]
            tenants = [p.tenant for p in batch]
            progress.done(batch, await clone.write_copies(driver, template, tenants, "tenants"))

    await asyncio.gather(*(worker() for _ in range(COPY_CONCURRENCY)))


async def ensure_loaded(
    svc: Services,
    driver: AsyncDriver,
    plans: Sequence[TenantPlan],
    say: Progress,
    seconds: float | None = None,
) -> dict[str, Any]:
    """Load what is missing of ``plans``, taking no new copy batch once ``seconds`` have
    passed since the start (the rest is left for a later run); figures of the load, with the
    tenants and rows present at its end."""
    started = time.perf_counter()
    templates = [p for p in load_order(plans) if p.template]
    written = 0
    for p in templates:
        written += await ensure_written(hashed(svc), driver, p, say)
    template_seconds = time.perf_counter() - started
    copies = [p for p in load_order(plans) if not p.template]
    todo = await missing_copies(driver, copies)
    say(
        f"{len(plans)} tenants ({total_rows(plans)} rows): {len(templates)} templates "
        f"({written} written now), {len(copies) - len(todo)} copies present, {len(todo)} to copy"
    )
    dims = svc.embedder.dimensions
    shapes = {p.rows: await clone.read_template(driver, p.tenant, dims) for p in templates}
    progress = Copying(len(todo), say)
    deadline = started + seconds if seconds is not None else None
    await copy_all(driver, shapes, todo, progress, deadline)
    copy_seconds = time.perf_counter() - progress.started
    return {
        "tenants": len(plans),
        "rows": total_rows(plans),
        "templates": len(templates),
        "templates_written": written,
        "template_seconds": round(template_seconds, 1),
        "copies_present": len(copies) - len(todo),
        "copied": progress.tenants,
        "copy_seconds": round(copy_seconds, 1),
        "copied_graph_rows": progress.graph_rows,
        "copy_tenants_per_s": round(progress.tenants / copy_seconds, 2) if todo else None,
        "tenants_present": len(plans) - len(todo) + progress.tenants,
        "rows_present": total_rows(plans) - sum(p.rows for p in todo) + progress.rows,
    }
