"""What a person wrote in shared scopes, found and erased with them (docs/reference/authorship.md).

Every write stamps ``writer_id`` and ``writer_key`` (``common.writer_params``). Erasing a
person finds the TENANT, AGENT and GLOBAL scopes holding rows with their key
(``cypher/authored.py AUTHORED_SCOPES``) and, by the tenant's policy:

- ``DELETE`` (the default): documents they created go whole (chunks, versions, revisions,
  the sources quoting them), their notes and note versions go, entities they named go unless
  others' facts still use them; their chunks, versions and revisions inside others' documents,
  and the entities still used, are kept anonymised (removing them would break others' rows);
- ``ANONYMISE``: every such row stays without ``writer_id``, ``writer_key``, session and run.

Each batch runs inside the job's transaction (``erasure_jobs.run_batch``) and adds its counts
to the job there, so the receipt is exact across crashes. Rows written before authorship was
stamped carry no ``writer_id``: the receipt counts them as ``unattributed``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher import authored as q
from palimpsest.cypher import erasure as eq
from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement, Tx
from palimpsest.domain.names import normalise
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef
from palimpsest.identity.permissions import require, tenant_admin
from palimpsest.identity.scopes import PersonRefs, authored_ref, tenant_config_ref
from palimpsest.resolvers import term_index
from palimpsest.resolvers.documents.sources import forget_facts, forget_terms, withdraw_batch
from palimpsest.resolvers.entities.merging import alias_params
from palimpsest.resolvers.erasure.jobs import (
    DEFAULT_POLICY,
    PLANES,
    AuthoredPolicy,
    Counts,
    Job,
    Planes,
    Work,
)
from palimpsest.resolvers.services import Services

# The scopes a person's writing is looked for in; their own USER scope is erased whole.
SHARED = [Scope.TENANT.value, Scope.AGENT.value, Scope.GLOBAL.value]


@dataclass(frozen=True, slots=True)
class ErasurePolicy:
    authored: AuthoredPolicy
    updated_at: datetime | None


def _policy_of(row: Row) -> ErasurePolicy:
    value = row["authored"]
    return ErasurePolicy(AuthoredPolicy(value) if value else DEFAULT_POLICY, row["updated_at"])


async def erasure_policy(svc: Services, who: Principal) -> ErasurePolicy:
    require(tenant_admin(who), "the erasure policy is for tenant admins")
    return await _read_policy(svc, tenant_config_ref(who))


async def set_erasure_policy(svc: Services, who: Principal, authored: str) -> ErasurePolicy:
    require(tenant_admin(who), "setting the erasure policy needs the admin role of this tenant")
    try:
        policy = AuthoredPolicy(authored)
    except ValueError:
        raise InvalidArgument("authored must be DELETE or ANONYMISE") from None
    params = {"authored": policy.value, "now": svc.clock()}
    [row] = await svc.db.scoped(tenant_config_ref(who)).write(q.SET_POLICY, params)
    return _policy_of(row)


async def _read_policy(svc: Services, tenant: ScopeRef) -> ErasurePolicy:
    [row] = await svc.db.scoped(tenant).read(q.GET_POLICY)
    return _policy_of(row)


async def policy_for(svc: Services, refs: PersonRefs, job: Job) -> AuthoredPolicy:
    """The job's policy: the one it started with (kept on the job), else the tenant's now,
    which the job then keeps (a resumed job never switches policy halfway)."""
    if job.policy is not None:
        return job.policy
    policy = (await _read_policy(svc, refs.tenant)).authored
    zero = Planes().as_list()
    add: dict[str, Any] = {"id": job.receipt.id, "policy": policy.value}
    add |= {"deleted": zero, "anonymised": zero}
    await svc.db.scoped(refs.tenant).write(q.ADD_AUTHORED, add)
    return policy


async def authored_scopes(svc: Services, refs: PersonRefs) -> list[ScopeRef]:
    params = {"writer_key": refs.person.scope_key, "shared": SHARED}
    # Every server: with tenant shards GLOBAL is on the designated one, and a member's rows
    # there must be found (their erasure then refuses across shards until erasure runs per
    # shard, docs/decisions/0011-tenant-shards.md, rather than reporting them erased).
    rows = [row for db in svc.db.everywhere() for row in await db.read(q.AUTHORED_SCOPES, params)]
    found = (authored_ref(refs.tenant.tenant_id, r["scope"], r["owner"], r["tenant"]) for r in rows)
    return [ref for ref in found if ref is not None]


def authored_work(
    refs: PersonRefs, ref: ScopeRef, policy: AuthoredPolicy, settings: Settings, job_id: str
) -> list[Work]:
    """The batches for one shared scope, in order (documents before their rows, facts before
    the entities they name)."""
    batch = settings.queue.erasure_batch
    params: dict[str, Any] = {"writer_key": refs.person.scope_key, "batch": batch}

    def counted(body: Any) -> Work:
        async def work(tx: Tx) -> tuple[int, Counts]:
            touched, deleted, anonymised = await body(tx.scoped(ref))
            add: dict[str, Any] = {"id": job_id, "policy": policy.value}
            add |= {"deleted": deleted.as_list(), "anonymised": anonymised.as_list()}
            await tx.scoped(refs.tenant).run(q.ADD_AUTHORED, add)
            return touched, Counts()

        return work

    def anonymise(plane: str) -> Work:
        async def body(tx: ScopedTx) -> tuple[int, Planes, Planes]:
            [row] = await tx.run(q.ANONYMISE[plane], params)
            n = int(row["rows"])
            return n, Planes(), Planes(**{plane: n})

        return counted(body)

    async def documents(tx: ScopedTx) -> tuple[int, Planes, Planes]:
        """One step of the first document left: its quoting sources, then a batch of its
        rows, then the document. ``batch`` touched while one is found, so the drain goes on."""
        found = await tx.run(q.AUTHORED_DOCUMENT, params)
        if not found:
            return 0, Planes(), Planes()
        doc_id = found[0]["id"]
        w = await withdraw_batch(tx, settings, ref.scope_key, doc_id, batch)
        if w.sources:
            return batch, Planes(facts=w.facts, entities=w.entities), Planes()
        [rows] = await tx.run(q.ERASE_DOCUMENT_ROWS, {"id": doc_id, "batch": batch})
        if rows["indexed"]:
            await forget_terms(tx, settings, "chunk", term_index.removed(rows["indexed"]))
        gone = Planes(
            chunks=int(rows["chunks"]),
            chunk_revisions=int(rows["chunk_revisions"]),
            document_revisions=int(rows["document_revisions"]),
        )
        if int(rows["rows"]) < batch:
            await tx.run(q.ERASE_DOCUMENT_NODE, {"id": doc_id})
            gone = Planes(**{**asdict(gone), "documents": 1})
        return batch, gone, Planes()

    async def notes(tx: ScopedTx) -> tuple[int, Planes, Planes]:
        [row] = await tx.run(q.ERASE_AUTHORED_NOTES, params)
        if row["indexed"]:
            await forget_terms(tx, settings, "memory", term_index.removed(row["indexed"]))
        return int(row["rows"]), Planes(entries=int(row["rows"])), Planes()

    def deleting(statement: Statement, plane: str) -> Work:
        async def body(tx: ScopedTx) -> tuple[int, Planes, Planes]:
            [row] = await tx.run(statement, params)
            return int(row["rows"]), Planes(**{plane: int(row["rows"])}), Planes()

        return counted(body)

    async def writer_facts(tx: ScopedTx) -> tuple[int, Planes, Planes]:
        [row] = await tx.run(eq.ERASE_WRITER_FACTS, params)
        ends = await forget_facts(tx, settings, row)
        return int(row["facts"]), Planes(facts=int(row["facts"]), entities=ends.entities), Planes()

    async def scrub_facts(tx: ScopedTx) -> tuple[int, Planes, Planes]:
        [row] = await tx.run(eq.SCRUB_WRITER_FACTS, params)
        return int(row["rows"]), Planes(), Planes(facts=int(row["rows"]))

    async def merged(tx: ScopedTx) -> tuple[int, Planes, Planes]:
        rows = await tx.run(q.AUTHORED_MERGED_ENTITIES, params)
        if rows:
            await tx.run(q.ERASE_AUTHORED_MERGED, unnamed(rows))
        return len(rows), Planes(entities=len(rows)), Planes()

    def anonymised(statement: Statement, plane: str | None) -> Work:
        async def body(tx: ScopedTx) -> tuple[int, Planes, Planes]:
            [row] = await tx.run(statement, params)
            n = int(row["rows"])
            return n, Planes(), Planes(**{plane: n}) if plane else Planes()

        return counted(body)

    async def co_writer(tx: ScopedTx) -> tuple[int, Planes, Planes]:
        [row] = await tx.run(eq.SCRUB_CO_WRITER, params)
        return int(row["rows"]), Planes(), Planes()

    # The tenant's facts are the person erasure's own work (erasure.py), as before.
    shared_facts = ref.scope_key != refs.tenant.scope_key
    facts: list[Work] = []
    if shared_facts:
        facts = [counted(scrub_facts), counted(co_writer)]
        if policy is AuthoredPolicy.DELETE:
            facts.insert(0, counted(writer_facts))
    rest = [anonymise(p) for p in ("chunks", "chunk_revisions", "document_revisions")]
    merges = anonymised(q.ANONYMISE_MERGES, None)  # the merges they made, under either policy
    if policy is AuthoredPolicy.ANONYMISE:
        return [
            *(anonymise(p) for p in PLANES if p != "facts"),
            anonymised(q.ANONYMISE_MERGED_ENTITIES, "entities"),
            merges,
            *facts,
        ]
    return [
        counted(documents),
        counted(notes),
        deleting(q.ERASE_AUTHORED_NOTE_VERSIONS, "note_versions"),
        *rest,
        *facts,
        counted(merged),
        anonymised(q.ANONYMISE_MERGED_ENTITIES, "entities"),  # those others were merged into
        merges,
        deleting(q.ERASE_AUTHORED_ENTITIES, "entities"),
        anonymise("entities"),
    ]


def unnamed(rows: list[Row]) -> dict[str, Any]:
    """``ERASE_AUTHORED_MERGED``'s parameters for a batch of the person's set-aside entities
    (``AUTHORED_MERGED_ENTITIES`` rows): their ids, each merge record without them and the
    names they brought, and each kept entity without those names as aliases. A name another
    set-aside entity of the same merge also brought stays."""
    ids = [r["id"] for r in rows]
    records: dict[str, dict[str, Any]] = {}
    kept: dict[str, list[str]] = {}
    for r in rows:
        # By normalise(), as the merge de-duplicated its added aliases: "BOB" from another
        # member shields the "Bob" the merge added in its stead.
        shared = {normalise(n) for n in r["others"]}
        gone = {normalise(n) for n in r["names"]} - shared
        if r["merged_ids"] is not None:
            record = records.setdefault(
                r["merge_id"],
                {
                    "id": r["merge_id"],
                    "merged_ids": list(r["merged_ids"]),
                    "added_aliases": list(r["added"] or ()),
                },
            )
            record["merged_ids"] = [i for i in record["merged_ids"] if i != r["id"]]
            record["added_aliases"] = [
                a for a in record["added_aliases"] if normalise(a) not in gone
            ]
            gone &= {normalise(a) for a in r["added"] or ()}  # only what the merge gave
        else:
            gone = set()
        if r["kept_id"] is not None:
            aliases = kept.setdefault(r["kept_id"], list(r["kept_aliases"] or ()))
            kept[r["kept_id"]] = [a for a in aliases if normalise(a) not in gone]
    return {
        "ids": ids,
        "records": list(records.values()),
        "kept": [{"id": k, **alias_params(a)} for k, a in kept.items()],
    }


async def count_unattributed(svc: Services, refs: PersonRefs, job_id: str) -> None:
    """Count, into the job, the rows of the tenant's shared scopes nobody can attribute."""
    total = 0
    for ref in {refs.tenant, *await authored_scopes(svc, refs)}:
        [row] = await svc.db.scoped(ref).read(q.UNATTRIBUTED)
        total += int(row["rows"])
    await svc.db.scoped(refs.tenant).write(q.SET_UNATTRIBUTED, {"id": job_id, "rows": total})
