"""``bench recall-latency --tenants``' copies on the real Neo4j: a copy of a template written
through the product's writers holds the same rows (labels, types, every property but the
tenant, scope, ids and vectors), and the product reads and writes it as its own."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from neo4j import AsyncGraphDatabase

from palimpsest.config import Settings
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope
from palimpsest.local.neo4j import credentials
from palimpsest.resolvers.facts import ledger
from palimpsest.resolvers.notes import keyvalue
from palimpsest.resolvers.recall.planner import RecallRequest, recall
from palimpsest.resolvers.services import Services
from palimpsest_bench import tenant_clone as clone
from palimpsest_bench.common import principal
from palimpsest_bench.recall_bench import POOL
from palimpsest_bench.recall_load import AGENT, TextGen
from palimpsest_bench.tenant_load import ensure_loaded, erase_tenant, hashed
from palimpsest_bench.tenant_measure import OPERATIONS, measure
from palimpsest_bench.tenant_plan import USER, TenantPlan
from palimpsest_bench.tenant_write import fact_draft, write_tenant

CHANGED = ("tenant_id", "scope_key", "writer_key")


def shape(template: clone.Template) -> Counter[tuple[Any, ...]]:
    """Every row with what a copy must keep: labels or type, and every property but the
    tenant, scope, ids and vectors (whose keys must still be there)."""

    def kept(row: clone.Row) -> tuple[Any, ...]:
        changed = set(CHANGED) | set(row.ids) | set(row.id_lists) | set(row.vectors)
        props = sorted((k, repr(v)) for k, v in row.props.items() if k not in changed)
        keys = sorted(k for k in row.props if k in changed)
        return (tuple(sorted(row.labels)), row.type, tuple(props), tuple(keys))

    return Counter(kept(r) for r in [*template.nodes, *template.relationships])


async def test_a_copy_holds_the_templates_rows_and_works_as_a_tenant(
    svc: Services, settings: Settings
) -> None:
    run = uuid.uuid4().hex[:8]
    plan = TenantPlan(f"t-tpl-{run}", 50, template=True)
    copies = [f"t-copy-{run}-{i}" for i in range(2)]
    driver = AsyncGraphDatabase.driver(
        settings.bolt_uri, auth=credentials(settings), notifications_min_severity="OFF"
    )
    try:
        await write_tenant(hashed(svc), plan)
        dims = svc.embedder.dimensions
        template = await clone.read_template(driver, plan.tenant, dims)
        written = await clone.write_copies(driver, template, copies, "test")
        assert written == len(copies) * template.size
        assert await clone.present(driver, [*copies, "t-never"]) == set(copies)
        first = await clone.read_template(driver, copies[0], dims)
        second = await clone.read_template(driver, copies[1], dims)
        assert shape(first) == shape(template) == shape(second)
        # No id, and no vector, is shared with the template or between the copies.
        for prop in ("id", "embedding"):
            values = [
                {repr(r.props[prop]) for r in t.nodes if prop in r.props}
                for t in (template, first, second)
            ]
            assert values[0]
            assert not values[0] & values[1]
            assert not values[1] & values[2]
        # The product reads the copy as its own tenant: the note the template holds, a search.
        who = principal(copies[0], USER, AGENT)
        original = principal(plan.tenant, USER, AGENT)
        note = await keyvalue.get(svc, who, Scope.USER, "notes/0")
        assert note is not None
        expected = await keyvalue.get(svc, original, Scope.USER, "notes/0")
        assert expected is not None
        assert note.value == expected.value
        request = RecallRequest(
            query=TextGen("t").query(),
            top_k=5,
            sources=pure.SEARCH_DEFAULT,
            view=ledger.time_view(svc, None, None),
            pool=POOL,
            levers=pure.Levers.of(svc.settings),
        )
        found = await recall(hashed(svc), who, [Scope.USER], request)
        assert found.hits
        # And writes to it, as to any tenant.
        facts = await ledger.assert_facts(
            hashed(svc), who, Scope.USER, [fact_draft(TextGen("t"), 9999)]
        )
        assert len(facts) == 1
    finally:
        for tenant in [plan.tenant, *copies]:
            await erase_tenant(driver, tenant)
        await driver.close()


async def test_a_load_resumes_and_the_measure_reports_every_ratio(
    svc: Services, settings: Settings
) -> None:
    run = uuid.uuid4().hex[:8]
    plans = [TenantPlan(f"t-load-{run}-{i}", 50, template=i == 0) for i in range(3)]
    driver = AsyncGraphDatabase.driver(
        settings.bolt_uri, auth=credentials(settings), notifications_min_severity="OFF"
    )
    said: list[str] = []
    try:
        first = await ensure_loaded(svc, driver, plans, said.append)
        assert (first["templates_written"], first["copied"]) == (1, 2)
        assert (first["tenants_present"], first["rows_present"]) == (3, 150)
        again = await ensure_loaded(svc, driver, plans, said.append)
        assert (again["templates_written"], again["copies_present"], again["copied"]) == (0, 2, 0)
        # The same server on both sides: every figure and ratio is there, and positive.
        out = await measure({"loaded": svc, "empty": svc}, plans[1], 2, 1, said.append, run)
        for op in OPERATIONS:
            for side in ("loaded", "empty"):
                assert out["figures"][side][op]["p50"] > 0
            assert out[f"{op}_p50_ratio"] > 0
            assert out[f"{op}_p95_ratio"] > 0
        assert "legs" in out["search_stage_p50_ratios"]
    finally:
        for p in plans:
            await erase_tenant(driver, p.tenant)
        await driver.close()
