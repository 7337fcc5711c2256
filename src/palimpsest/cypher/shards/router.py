"""Every unit of work on its tenant's shard: one driver per shard, the executor unchanged.

``ShardedDatabase`` is the ``Database`` resolvers get when ``PALIMPSEST_NEO4J_SHARDS`` is set.
A scope-bound handle (``db.scoped(ref)``) runs on the shard of its ref's tenant; the unbound
handle (transactions that bind scopes inside, and cross-scope statements) runs on the shard
of the request's tenant (``causal.Causal.tenant``, set by the bookmarks middleware), and
outside a request on the designated shard. GLOBAL (tenant ``""``) is on the designated shard.

Each statement a unit runs is checked against the shard it runs on: a scoped statement for a
tenant whose shard is another (a GLOBAL ref inside a tenant's transaction, say) is refused as
the programming error it is, never run on the wrong server. ``partition`` splits a read
across scopes by shard, for the resolvers that fuse what each shard found (recall).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from palimpsest.cypher.driver.causal import current as causal_scope
from palimpsest.cypher.driver.executor import (
    Database,
    Executor,
    Neo4jExecutor,
    RawRun,
    Row,
    ScopedDatabase,
    ScopeViolation,
    Statement,
)
from palimpsest.cypher.shards.directory import Directory
from palimpsest.cypher.slots import Slot
from palimpsest.identity import ScopeRef

T = TypeVar("T")
GLOBAL_TENANT = ""  # a GLOBAL ref's tenant_id (identity.resolve_scope)


class ShardRouter:
    """The shards' executors (one driver each), the designated one, and the directory."""

    def __init__(
        self, executors: Mapping[str, Executor], designated: str, directory: Directory
    ) -> None:
        self.executors = dict(executors)
        self.designated = designated
        self.directory = directory

    async def shard_of(self, tenant_id: str, *, assign: bool) -> str:
        if tenant_id == GLOBAL_TENANT:
            return self.designated
        return await self.directory.shard_of(tenant_id, assign=assign)

    def cached(self, tenant_id: str) -> str | None:
        if tenant_id == GLOBAL_TENANT:
            return self.designated
        return self.directory.cached(tenant_id)

    def databases(self) -> dict[str, Database]:
        """One unbound handle per shard, for what runs on every shard (the schema)."""
        return {name: Database(executor) for name, executor in self.executors.items()}

    def use_slot(self, slot: Slot, dual: bool) -> None:
        """The active embedding slot on every shard (``resolvers/reembed.use_slot``)."""
        for executor in self.executors.values():
            if isinstance(executor, Neo4jExecutor):
                executor.slot = slot
                executor.dual = dual


class RoutedExecutor:
    """An ``Executor`` that runs each unit on one tenant's shard: ``tenant`` None is the
    request's tenant (the designated shard outside a request). ``shard``: always that shard,
    whatever the tenant (a job's pass over every shard, ``ShardedDatabase.everywhere``)."""

    def __init__(self, router: ShardRouter, tenant: str | None, shard: str | None = None) -> None:
        self.router = router
        self.tenant = tenant
        self.shard = shard

    async def execute(
        self, work: Callable[[RawRun], Awaitable[T]], *, write: bool, single: bool = False
    ) -> T:
        router = self.router
        tenant = self.tenant
        if self.shard is not None:
            shard = self.shard
        else:
            if tenant is None:
                causal = causal_scope()
                tenant = causal.tenant if causal is not None and causal.tenant else GLOBAL_TENANT
            shard = await router.shard_of(tenant, assign=write)

        def checked(run: RawRun) -> Awaitable[T]:
            async def on_shard(statement: Statement, params: dict[str, Any]) -> list[Row]:
                other = params.get("tenant_id") if statement.scoped else None
                if (
                    other is not None
                    and other != tenant
                    and (router.cached(other) or await router.shard_of(other, assign=write))
                    != shard
                ):
                    raise ScopeViolation(
                        f"{statement.name}: a scope of another shard inside this unit of work; "
                        "run it through db.scoped(ref) or db.partition(refs)"
                    )
                return await run(statement, params)

            return work(on_shard)

        return await router.executors[shard].execute(checked, write=write, single=single)

    async def ping(self) -> None:
        """The designated shard: what every request may need (the directory, GLOBAL)."""
        await self.router.executors[self.router.designated].ping()


class ShardedDatabase(Database):
    """The unbound handle over tenant shards; see the module's text for where work runs."""

    def __init__(self, router: ShardRouter) -> None:
        super().__init__(RoutedExecutor(router, None))
        self.router = router

    def scoped(self, ref: ScopeRef) -> ScopedDatabase:
        return ScopedDatabase(RoutedExecutor(self.router, ref.tenant_id), ref)

    async def partition(self, refs: Sequence[ScopeRef]) -> list[tuple[Database, list[ScopeRef]]]:
        groups: dict[str, list[ScopeRef]] = {}
        for ref in refs:  # reads: a tenant that never wrote is placed, not recorded
            groups.setdefault(await self.router.shard_of(ref.tenant_id, assign=False), []).append(
                ref
            )
        return [(self._pinned(group), group) for group in groups.values()]

    def everywhere(self) -> list[Database]:
        """One handle per shard, each pinned to it: a job's pass over every shard (the
        consolidator's leases). A scope of another shard is refused inside, as ever."""
        return [Database(RoutedExecutor(self.router, None, name)) for name in self.router.executors]

    def _pinned(self, refs: Iterable[ScopeRef]) -> Database:
        """An unbound handle on the shard of ``refs`` (of one tenant, or GLOBAL)."""
        first = next(iter(refs))
        return Database(RoutedExecutor(self.router, first.tenant_id))
