"""Erasure: a person across every plane, or one subject in one scope (docs/spec.md, Erasure
and export).

A person's erasure removes, in bounded batches of a durable job (``erasure_jobs``):

1. in the tenant scope, every source quoting the person's scope (a fact goes with its last
   source) and the facts the person wrote there without a source (they belong to them);
   facts they wrote that others still attest, or also asserted without a source, stay
   without the person's key and run ids (a fact goes with its last asserter), the person
   leaves the asserters of others' facts, and erasure records they asked for stop naming
   them;
2. in the person's USER scope, every row of every label: sources, fact pairs, facts,
   entities and their mention edges, chunks, documents, key/value entries, pending spans
   (queued, leased and dead-letter) and the scope's own record;
3. the person's SQL Memory database with its WAL, SHM and owner record.

Passes repeat until one finds nothing left, so rows written meanwhile are caught too. Agent
scopes are the agents' memory and are not touched. A subject's erasure removes one entity,
the facts about it (with their sources) and its mention edges from one scope; chunks stay.
"""

from __future__ import annotations

import hashlib
import logging

from palimpsest.config import Settings
from palimpsest.cypher import erasure as q
from palimpsest.cypher.driver.executor import Statement, Tx
from palimpsest.domain.names import normalise
from palimpsest.errors import Conflict, InvalidArgument, NotFound, PalimpsestError
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.identity.permissions import require, tenant_admin
from palimpsest.identity.principal import console_operator
from palimpsest.identity.scopes import PersonRefs, person_refs, tenant_config_ref
from palimpsest.resolvers.documents.sources import forget_facts, withdraw_batch
from palimpsest.resolvers.erasure import authored, jobs
from palimpsest.resolvers.erasure.jobs import AuthoredPolicy, Counts, ErasureKind, Receipt, Work
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef

log = logging.getLogger(__name__)
MAX_PASSES = 3
SELF = "self"
ERASED = "erased user"

# Every label a USER scope holds, in deletion order, with the receipt counter it feeds. A
# unit test checks this covers every scoped label a person's scope can hold. Harvested spans go
# first: a consolidator re-checks its lease on them before writing, so it stops writing here.
PERSON_LABELS: tuple[tuple[str, Statement, str | None], ...] = (
    ("PendingSpan", q.ERASE_SPANS, "spans"),
    ("Source", q.ERASE_SOURCES, "fact_sources"),
    ("FactPair", q.ERASE_FACT_PAIRS, None),
    ("FACT", q.ERASE_FACTS, "facts"),
    ("Entity", q.ERASE_ENTITIES, "entities"),
    ("MergedEntity", q.ERASE_MERGED_ENTITIES, "entities"),
    ("EntityMerge", q.ERASE_ENTITY_MERGES, None),
    ("Chunk", q.ERASE_CHUNKS, "chunks"),
    ("ChunkVersion", q.ERASE_CHUNK_VERSIONS, "chunk_revisions"),
    ("Passage", q.ERASE_PASSAGES, None),
    ("Document", q.ERASE_DOCUMENTS, "documents"),
    ("DocumentRevision", q.ERASE_DOCUMENT_REVISIONS, "document_revisions"),
    ("Memory", q.ERASE_MEMORY, "entries"),
    ("MemoryVersion", q.ERASE_MEMORY_VERSIONS, "note_versions"),
    ("TermStats", q.ERASE_TERM_STATS, None),
    ("Scope", q.ERASE_SCOPE_RECORD, None),
)


async def erase_user(svc: Services, who: Principal, user_id: str) -> Receipt:
    """A tenant admin erases a named user of their tenant (``person_refs`` checks)."""
    refs = person_refs(who, user_id)
    return await _erase_person(svc, refs, _requester(who, refs))


async def erase_me(svc: Services, who: Principal) -> Receipt:
    refs = person_refs(who)
    return await _erase_person(svc, refs, SELF)


async def resume_pending(svc: Services) -> list[Receipt]:
    """Finish the person erasures this host left running (called at start-up)."""
    finished = []
    for tenant_id, job_id in jobs.journal_entries(svc):
        operator = console_operator(tenant_id)
        tenant = tenant_config_ref(operator)
        job = await jobs.get_job(svc, tenant, job_id)
        if job is None or job.receipt.status != jobs.RUNNING or job.user_id is None:
            jobs.journal_remove(svc, job_id)
            continue
        # Opening the same target again picks up this job and counts one more attempt.
        refs = person_refs(operator, job.user_id)
        try:
            finished.append(await _erase_person(svc, refs, job.receipt.requested_by))
        except PalimpsestError as e:  # kept in the journal: the next start-up tries again
            log.warning("erasure job=%s not finished: %s", job_id, e.code)
            continue
        log.info("erasure resumed and finished job=%s", job_id)
    return finished


async def _erase_person(svc: Services, refs: PersonRefs, requested_by: str) -> Receipt:
    job = await jobs.open_job(
        svc,
        refs.tenant,
        kind=ErasureKind.USER,
        target_scope=Scope.USER.value,
        active_key=refs.person.scope_key,
        user_id=refs.user_id,
        requested_by=requested_by,
    )
    job_id = job.receipt.id
    jobs.journal_add(svc, refs.tenant.tenant_id, job_id)
    policy = await authored.policy_for(svc, refs, job)
    receipt = await _run_person(svc, refs, job_id, policy)
    jobs.journal_remove(svc, job_id)
    return receipt


async def _run_person(
    svc: Services, refs: PersonRefs, job_id: str, policy: AuthoredPolicy
) -> Receipt:
    batch = svc.settings.queue.erasure_batch
    for _ in range(MAX_PASSES):
        for work in _person_work(refs, svc.settings, batch, policy):
            await _drain(svc, refs.tenant, job_id, work, batch)
        for ref in await authored.authored_scopes(svc, refs):
            for work in authored.authored_work(refs, ref, policy, svc.settings, job_id):
                await _drain(svc, refs.tenant, job_id, work, batch)
        await _erase_sql(svc, refs, job_id)
        if not await _anything_left(svc, refs):
            await authored.count_unattributed(svc, refs, job_id)
            return await jobs.finish(svc, refs.tenant, job_id)
    raise Conflict(
        "new data of this user kept arriving during the erasure; stop their runs and call "
        "the erasure again to finish it"
    )


def _person_work(
    refs: PersonRefs, settings: Settings, batch: int, policy: AuthoredPolicy
) -> list[Work]:
    person, tenant = refs.person, refs.tenant

    async def tenant_sources(tx: Tx) -> tuple[int, Counts]:
        w = await withdraw_batch(tx.scoped(tenant), settings, person.scope_key, None, batch)
        return w.sources, Counts(fact_sources=w.sources, facts=w.facts, entities=w.entities)

    params = {"writer_key": person.scope_key, "batch": batch}

    async def tenant_writer_facts(tx: Tx) -> tuple[int, Counts]:
        scoped = tx.scoped(tenant)
        [row] = await scoped.run(q.ERASE_WRITER_FACTS, params)
        ends = await forget_facts(scoped, settings, row)
        return int(row["facts"]), Counts(facts=int(row["facts"]), entities=ends.entities)

    async def tenant_writer_scrub(tx: Tx) -> tuple[int, Counts]:
        [row] = await tx.scoped(tenant).run(q.SCRUB_WRITER_FACTS, params)
        return int(row["rows"]), Counts()

    async def tenant_co_writer_scrub(tx: Tx) -> tuple[int, Counts]:
        [row] = await tx.scoped(tenant).run(q.SCRUB_CO_WRITER, params)
        return int(row["rows"]), Counts()

    async def tenant_requests_scrub(tx: Tx) -> tuple[int, Counts]:
        scrub = {"user_id": refs.user_id, "erased": ERASED, "batch": batch}
        [row] = await tx.scoped(tenant).run(q.SCRUB_REQUESTER, scrub)
        return int(row["rows"]), Counts()

    # ANONYMISE keeps the tenant facts the person wrote, without their key and run ids.
    deleting = [tenant_writer_facts] if policy is AuthoredPolicy.DELETE else []
    return [
        tenant_sources,
        *deleting,
        tenant_writer_scrub,
        tenant_co_writer_scrub,
        tenant_requests_scrub,
        *(_label_work(person, s, counter, batch) for _, s, counter in PERSON_LABELS),
    ]


def _label_work(ref: ScopeRef, statement: Statement, counter: str | None, batch: int) -> Work:
    async def work(tx: Tx) -> tuple[int, Counts]:
        [row] = await tx.scoped(ref).run(statement, {"batch": batch})
        counts = Counts(**{counter: int(row["counted"] or 0)}) if counter else Counts()
        return int(row["rows"]), counts

    return work


async def _drain(svc: Services, tenant: ScopeRef, job_id: str, work: Work, batch: int) -> None:
    """Run ``work`` in counted batches until one comes back short."""
    while await jobs.run_batch(svc, tenant, job_id, work) >= batch:
        pass


async def _anything_left(svc: Services, refs: PersonRefs) -> bool:
    """Rows written while the pass ran (or missed by it) send the job round again."""
    [mine] = await svc.db.scoped(refs.person).read(q.PERSON_LEFT)
    params = {"person_key": refs.person.scope_key}
    [shared] = await svc.db.scoped(refs.tenant).read(q.TENANT_LEFT, params)
    on_disk = any(d.key == refs.person.scope_key for d in await svc.sql.databases())
    wrote = await authored.authored_scopes(svc, refs)
    return bool(mine["left"] or shared["left"] or on_disk or wrote)


async def _erase_sql(svc: Services, refs: PersonRefs, job_id: str) -> None:
    """Count the database into the job, then delete it: a crash in between is finished
    by the next attempt without counting it twice (``sql_erasing``)."""
    key = refs.person.scope_key
    job = await jobs.get_job(svc, refs.tenant, job_id)
    if job is not None and job.sql_erasing:
        await svc.sql.erase(key)
        await jobs.run_batch(svc, refs.tenant, job_id, _nothing, sql_erasing=False)
    found = [d for d in await svc.sql.databases() if d.key == key]
    if not found:
        await svc.sql.erase(key)  # an owner record left without its database
        return
    counted = Counts(sql_databases=1, sql_bytes=found[0].bytes)

    async def count(_: Tx) -> tuple[int, Counts]:
        return 1, counted

    await jobs.run_batch(svc, refs.tenant, job_id, count, sql_erasing=True)
    await svc.sql.erase(key)
    await jobs.run_batch(svc, refs.tenant, job_id, _nothing, sql_erasing=False)


async def _nothing(_: Tx) -> tuple[int, Counts]:
    return 0, Counts()


def _requester(who: Principal, refs: PersonRefs | None = None) -> str:
    """Who asked, for the audit: an admin by name, a person erasing their own as ``self``
    (a person's name is scrubbed from these records when they are erased)."""
    if refs is not None and who.user_id == refs.user_id:
        return SELF
    if not tenant_admin(who):
        return SELF
    return who.user_id or who.agent_name or who.origin.value


# -- one subject ---------------------------------------------------------------------------


async def erase_subject(svc: Services, who: Principal, scope: Scope, subject: EntityRef) -> Receipt:
    """Remove an entity, every fact about it (with their sources) and its mention edges from
    one scope. The shared scopes need the admin role; chunks and documents stay."""
    ref = resolve_scope(who, scope)
    if scope in (Scope.TENANT, Scope.GLOBAL):
        require(tenant_admin(who), f"erasing a subject from {scope.value} needs the admin role")
    type_, name = normalise(subject.type), normalise(subject.name)
    if not type_ or not name:
        raise InvalidArgument("subject: type and name must not be blank")
    tenant = tenant_config_ref(who)
    raw = "\x1f".join((ref.scope_key, type_, name)).encode()
    active_key = "subject:" + hashlib.sha256(raw).hexdigest()[:32]
    found = await svc.db.scoped(ref).read(q.FIND_SUBJECT, {"type": type_, "name": name})
    if not found:
        # Gone already: either never there, or an interrupted attempt deleted it last.
        running = await jobs.find_running(svc, tenant, active_key)
        if running is None:
            raise NotFound("no such subject in this scope")
        return await jobs.finish(svc, tenant, running.receipt.id)
    job = await jobs.open_job(
        svc,
        tenant,
        kind=ErasureKind.SUBJECT,
        target_scope=scope.value,
        active_key=active_key,
        user_id=None,
        requested_by=_requester(who),
    )
    job_id, entity_id = job.receipt.id, found[0]["id"]
    batch = svc.settings.queue.erasure_batch
    facts = _subject_facts(ref, svc.settings, entity_id, batch)
    await _drain(svc, tenant, job_id, facts, batch)
    await jobs.run_batch(svc, tenant, job_id, _subject_entity(ref, entity_id))
    return await jobs.finish(svc, tenant, job_id)


def _subject_facts(ref: ScopeRef, settings: Settings, entity_id: str, batch: int) -> Work:
    async def work(tx: Tx) -> tuple[int, Counts]:
        scoped = tx.scoped(ref)
        [row] = await scoped.run(q.ERASE_SUBJECT_FACTS, {"id": entity_id, "batch": batch})
        others = [i for i in row["entity_ids"] if i != entity_id]
        entities = (await forget_facts(scoped, settings, {**row, "entity_ids": others})).entities
        facts = int(row["facts"])
        return facts, Counts(facts=facts, fact_sources=int(row["sources"] or 0), entities=entities)

    return work


def _subject_entity(ref: ScopeRef, entity_id: str) -> Work:
    async def work(tx: Tx) -> tuple[int, Counts]:
        [row] = await tx.scoped(ref).run(q.ERASE_SUBJECT, {"id": entity_id})
        return int(row["entities"]), Counts(entities=int(row["entities"]))

    return work
