"""One tenant's rows written through the product's own writers (``bench recall-latency
--tenants``): the templates the other tenants are copied from, and the measured tenant.

Document chunks through ``import_documents``, conversation turns through ``harvest`` and the
consolidator (``consolidate_scope``, as a worker drains a queue), notes through
``set_value`` (embedded) and facts through ``assert_facts``: exactly the rows, relationships,
term statistics and index entries the API writes. Vectors come from the ``Services`` given
(the bench passes ``HashEmbedder`` ones); texts from ``TextGen`` seeded by the tenant, so a
tenant's content depends only on its name and size.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from palimpsest.identity import Scope
from palimpsest.ontology.extractors import load
from palimpsest.resolvers.cycle import harvesting as hv
from palimpsest.resolvers.cycle.consolidate import WorkerConfig, consolidate_scope
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.facts import ledger
from palimpsest.resolvers.notes import keyvalue
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest_bench.common import principal
from palimpsest_bench.recall_load import AGENT, ScopePlan, TextGen, batches
from palimpsest_bench.tenant_plan import USER, TenantPlan

TURN_BATCH = 100  # spans per harvest call
FACT_BATCH = 50  # facts per assert_facts call
SPEAKERS = ("user", "assistant")
PREDICATES = ("works on", "lives in", "prefers", "owns", "visited")


@dataclass(frozen=True, slots=True)
class Written:
    chunks: int
    turns: int
    notes: int
    facts: int


def scope_of(plan: TenantPlan) -> ScopePlan:
    """The tenant's one USER scope, as the recall benchmarks name scopes."""
    return ScopePlan(plan.tenant, USER, plan.mix.chunks)


async def write_tenant(svc: Services, plan: TenantPlan) -> Written:
    """Write every row of ``plan`` through the product's writers."""
    mix = plan.mix
    who = principal(plan.tenant, USER, AGENT)
    scope = scope_of(plan)
    chunks = 0
    for _, drafts, size in batches([scope], 400):
        await importer.import_documents(svc, who, Scope.USER, drafts)
        chunks += size
    gen = TextGen(f"tenant-rows/{plan.tenant}")
    spans = [
        hv.SpanDraft(gen.sentence(gen.topic()), speaker=SPEAKERS[i % 2]) for i in range(mix.turns)
    ]
    for start in range(0, len(spans), TURN_BATCH):
        await hv.harvest(svc, who, spans[start : start + TURN_BATCH], 1)
    cfg = WorkerConfig(owner=f"bench-tenants-{uuid.uuid4().hex[:8]}", extractors=load(()))
    turns = 0
    while (done := await consolidate_scope(svc, cfg, plan.tenant, USER, scope.key)).leased:
        turns += done.consolidated
    if turns != mix.turns:
        raise RuntimeError(f"{plan.tenant}: {mix.turns} turns harvested, {turns} consolidated")
    for i in range(mix.notes):
        text = gen.paragraph(gen.topic())
        await keyvalue.set_value(svc, who, Scope.USER, f"notes/{i}", text, None, True, None)
    facts = [fact_draft(gen, i) for i in range(mix.facts)]
    for start in range(0, len(facts), FACT_BATCH):
        await ledger.assert_facts(svc, who, Scope.USER, facts[start : start + FACT_BATCH])
    return Written(chunks, turns, mix.notes, mix.facts)


def fact_draft(gen: TextGen, serial: int) -> FactDraft:
    """A fact about a person of its own (``serial`` keeps natural keys apart)."""
    topic = gen.topic()
    text = gen.sentence(topic)
    name = f"{text.split()[0]} {serial}"
    predicate = PREDICATES[serial % len(PREDICATES)]
    return FactDraft(EntityRef("person", name), predicate, None, topic, text=text)
