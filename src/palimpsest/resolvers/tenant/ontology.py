"""The tenant ontology and placement (docs/spec.md, Placement): store, dry-run, and placed writes.

A placed batch makes one decision per item before anything is written, then writes every
fact (with its subject, object and mention edges) in its placed scope, all in one
transaction. Mention edges are drawn only when the source chunk lives in the placed scope;
a moved fact keeps its quote as provenance, so no relationship ever joins two scopes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from palimpsest.cypher import entities as eq
from palimpsest.cypher import ontology as q
from palimpsest.cypher.driver.executor import Tx
from palimpsest.domain.names import normalise
from palimpsest.errors import Forbidden, Unavailable
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.identity.permissions import require, tenant_admin
from palimpsest.identity.scopes import tenant_config_ref
from palimpsest.ontology import Ontology, OntologyStatus, parse_ontology
from palimpsest.ontology.placement import Placement, PlacementItem, place_batch
from palimpsest.resolvers.common import fact_stamp, writer_params
from palimpsest.resolvers.facts import closure
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import FactDraft
from palimpsest.schema.fact_rows import FactRow
from palimpsest.schema.turns import RunStamp


@dataclass(frozen=True, slots=True)
class SingleValued:
    """A predicate a type's subjects hold one value of at a time (own or inherited)."""

    entity_type: str
    predicate: str
    spellings: tuple[str, ...]  # every spelling that names it (``same:``), itself first
    type_spellings: tuple[str, ...] = ()  # the type's name, then its aliases


@dataclass(frozen=True, slots=True)
class StoredOntology:
    markdown: str | None  # None: read by a writer refused TENANT (``get_ontology``)
    status: str
    updated_at: datetime | None  # None: read by a writer refused TENANT
    updated_by: str | None
    single_valued: tuple[SingleValued, ...] = ()


@dataclass(frozen=True, slots=True)
class PlacedFact:
    asserted: facts.Asserted
    placement: Placement | None


async def set_ontology(svc: Services, who: Principal, markdown: str) -> StoredOntology:
    """Replace the tenant's ontology; tenant admins only. Parse errors change nothing."""
    require(tenant_admin(who), "setting the tenant ontology needs the admin role")
    ref = resolve_scope(who, Scope.TENANT)
    parsed = parse_ontology(markdown)
    params = {
        **writer_params(who),
        "markdown": markdown,
        "status": parsed.status.value,
        "now": svc.clock(),
    }
    [row] = await svc.db.scoped(ref).write(q.SET_ONTOLOGY, params)
    return _stored(row)


async def get_ontology(svc: Services, who: Principal) -> StoredOntology | None:
    """The ontology as a caller reads it. It lives in the tenant scope: a caller reaching
    TENANT reads all of it. What a caller may not read must not shape what it sees, yet the
    single-valued declarations close every writer's facts (a core of user facts), so a caller
    refused TENANT that writes facts in a scope of its own (an isolated member, a token
    without TENANT) reads exactly those: the declarations in force, with the type and
    predicate spellings that bring them into play (docs/security.md). The Markdown, the
    other types and aliases, and where types are placed stay unread."""
    try:
        resolve_scope(who, Scope.TENANT)
    except Forbidden:
        if not _writes_own_scope(who):
            raise
        stored = await _read(svc, who)
        return _what_shapes_writes(stored) if stored else None
    return await _read(svc, who)


def _writes_own_scope(who: Principal) -> bool:
    for scope in (Scope.USER, Scope.AGENT):
        try:
            resolve_scope(who, scope)
        except Forbidden:
            continue
        return True
    return False


def _what_shapes_writes(stored: StoredOntology) -> StoredOntology | None:
    """``stored`` as a writer refused TENANT reads it: only the single-valued declarations,
    and only when they are in force. No Markdown, no author, no time of the last edit; and an
    ontology that closes nothing (a draft, or none declared) reads as none, so the caller
    does not learn that one exists."""
    if stored.status != OntologyStatus.CONFIRMED.value or not stored.single_valued:
        return None
    return StoredOntology(None, stored.status, None, None, stored.single_valued)


async def _read(svc: Services, who: Principal) -> StoredOntology | None:
    # Placement consults the ontology for every caller (it only ever keeps facts home when
    # the caller may not reach TENANT), so this server-side read needs no TENANT grant.
    rows = await svc.db.scoped(tenant_config_ref(who)).read(q.GET_ONTOLOGY)
    return _stored(rows[0]) if rows else None


async def placement(
    svc: Services, who: Principal, scope: Scope, items: Sequence[PlacementItem]
) -> list[Placement]:
    """The dry run: one decision per item, nothing written."""
    ref = resolve_scope(who, scope)
    ontology = await _load(svc, who)
    decided = place_batch(ontology, who, scope, await _with_recorded_types(svc, ref, items))
    if ontology is None:
        return decided
    out = []
    for p in decided:
        etype = ontology.find(p.entity_type)
        out.append(replace(p, single_valued=tuple(sorted(etype.single))) if etype else p)
    return out


@dataclass(frozen=True, slots=True)
class PlacedPlan:
    """A placed batch decided and embedded, ready to be written inside a transaction."""

    origin: ScopeRef
    rows: list[FactRow]
    decisions: list[Placement | None]
    groups: dict[ScopeRef, list[int]]  # the rows (by position) each scope receives
    stamp: dict[str, Any]
    writer: Principal  # also whom the written facts are decoded for
    rules: closure.Rules | None = None  # single-valued predicates close what they replace


async def assert_placed(
    svc: Services, who: Principal, scope: Scope, drafts: Sequence[FactDraft], place: bool
) -> list[PlacedFact]:
    plan = await plan_placed(svc, who, scope, drafts, place)
    servers = await svc.db.partition([plan.origin, *plan.groups])
    if len(servers) > 1:
        # One transaction runs on one server: a batch placed both in the caller's tenant and
        # in GLOBAL, on another tenant shard, is refused whole, before anything is written.
        raise Unavailable(
            "these facts are placed both in this tenant and in GLOBAL, which live on "
            "different servers (tenant shards): assert the GLOBAL facts in a call of their own"
        )
    written = dict(await servers[0][0].write_tx(lambda tx: write_placed(tx, svc, plan)))
    return [PlacedFact(written[i], plan.decisions[i]) for i in range(len(plan.rows))]


async def plan_placed(
    svc: Services,
    who: Principal,
    scope: Scope,
    drafts: Sequence[FactDraft],
    place: bool,
    stamp: RunStamp | None = None,
) -> PlacedPlan:
    """One placement decision per draft, and the embeddings, before any transaction.

    ``stamp`` overrides the writer's provenance (the consolidator writes as the harvested run,
    and each fact carries the span's compaction generation).
    """
    origin = resolve_scope(who, scope)
    rows = prepare(drafts)
    if stamp is not None:
        rows = [replace(r, compaction_generation=stamp.compaction_generation) for r in rows]
    decisions: list[Placement | None] = [None] * len(rows)
    rules = await closure.load_rules(svc, who)
    if place:
        items = [PlacementItem(entity_type=r.subject_type, subject=r.subject_name) for r in rows]
        ontology = rules.ontology
        items = await _with_recorded_types(svc, origin, items)
        decisions = list(place_batch(ontology, who, scope, items))
    targets: dict[Scope, ScopeRef] = {scope: origin}
    groups: dict[ScopeRef, list[int]] = {}
    for i, decision in enumerate(decisions):
        target = decision.scope if decision else scope
        if target not in targets:
            targets[target] = resolve_scope(who, target)
        groups.setdefault(targets[target], []).append(i)
    rows = await facts.embed_rows(svc, rows)
    written_as = fact_stamp(who, stamp.params() if stamp else None)
    return PlacedPlan(origin, rows, decisions, groups, written_as, who, rules)


async def write_placed(tx: Tx, svc: Services, plan: PlacedPlan) -> list[tuple[int, facts.Asserted]]:
    """Write a planned batch: each fact with its anchors in its placed scope."""
    sourced = await facts.resolve_sources(tx.scoped(plan.origin), plan.rows)
    written: list[tuple[int, facts.Asserted]] = []
    for target, group in plan.groups.items():
        rows = [sourced[i] for i in group]
        if target != plan.origin:
            # A mention edge stays in its chunk's scope: a moved fact draws none.
            rows = [replace(r, mention_chunk_id=None) for r in rows]
        written += await facts.write_batch(
            tx.scoped(target), svc, plan.stamp, rows, plan.writer, plan.rules
        )
    return written


async def _load(svc: Services, who: Principal) -> Ontology | None:
    stored = await _read(svc, who)  # the whole of it: read on the server's behalf
    return parse_ontology(stored.markdown) if stored and stored.markdown is not None else None


async def _with_recorded_types(
    svc: Services, ref: ScopeRef, items: Sequence[PlacementItem]
) -> list[PlacementItem]:
    """Attach the types each subject is already recorded under in the caller's scope."""
    names = sorted({normalise(i.subject) for i in items if i.subject})
    if not names:
        return list(items)
    rows = await svc.db.scoped(ref).read(eq.SUBJECT_TYPES, {"names": names})
    recorded = {r["name"]: frozenset(r["types"]) for r in rows}
    return [
        PlacementItem(
            entity_type=i.entity_type,
            subject=i.subject,
            recorded_types=i.recorded_types | recorded.get(normalise(i.subject or ""), frozenset()),
        )
        for i in items
    ]


def _stored(row: dict[str, Any]) -> StoredOntology:
    parsed = parse_ontology(row["markdown"])
    single = tuple(
        SingleValued(
            t.name, p, (p, *sorted(t.spellings(p) - {p})), (t.name, *sorted(t.aliases - {t.name}))
        )
        for t in parsed.types.values()
        for p in sorted(t.single)
    )
    return StoredOntology(
        row["markdown"], row["status"], row["updated_at"], row["agent_name"], single
    )
