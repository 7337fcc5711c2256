"""``AsyncClient``: the asyncio flavour (``Client`` in sync.py is generated from this file).
Each method is one GraphQL root field in snake_case, its arguments the field's (keyword
arguments in snake_case), its result the field's type."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, Unpack

import httpx

from palimpsest.client import operations as op
from palimpsest.client.enums import PairVerdict, Scope
from palimpsest.client.transport import AsyncTransport, RetryPolicy
from palimpsest.client.wire import Operation, camel

if TYPE_CHECKING:  # annotations only: each result type is built when its operation runs
    from palimpsest.client.inputs import (
        EntityInput,
        FactInput,
        MemoryFileCommandInput,
        RecallOptions,
        SpanInput,
    )
    from palimpsest.client.recall_results import (
        ContextBlock,
        Entity,
        EntityDuplicatePage,
        EntityMerge,
        FactAssertion,
        FactConflictPage,
        FactPage,
        HarvestReceipt,
        JudgeConflictsResult,
        RecallResult,
    )
    from palimpsest.client.results import (
        DeleteResult,
        Document,
        Me,
        MemoryEntry,
        MemoryEntryPage,
        MemoryFileAnswer,
        MemoryVersionPage,
        SqlQueryResult,
        Usage,
    )

T = TypeVar("T")
When = datetime | str


class AsyncClient:
    """``AsyncClient(url="http://127.0.0.1:8080", token=...)``; ``await aclose()`` it, or use
    it in ``async with``."""

    def __init__(
        self,
        url: str = "http://127.0.0.1:8080",
        token: str | None = None,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        bookmark: str | None = None,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.transport = AsyncTransport(url, token, policy=retry, timeout=timeout, http=http)
        self.transport.rules.bookmark = bookmark

    @property
    def bookmark(self) -> str | None:
        """The sealed bookmark of the last answer: sent with the next request. Hand it to
        another client of the same token (``bookmark=``) to read this one's writes there."""
        return self.transport.rules.bookmark

    async def call(self, operation: Operation[T], **args: Any) -> T:
        """Run any root field (``palimpsest.client.operations``); arguments in snake_case."""
        document, variables = operation.request({camel(k): v for k, v in args.items()})
        return operation.read(await self.transport.post(document, variables))

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def health(self) -> str:
        return await self.call(op.HEALTH)

    async def me(self) -> Me:
        return await self.call(op.ME)

    async def usage(self, scope: Scope | str) -> Usage:
        """What the scope stores on every plane, beside each limit."""
        return await self.call(op.USAGE, scope=scope)

    async def memory(
        self,
        scope: Scope | str,
        key: str,
        *,
        as_of: When | None = None,
        known_at: When | None = None,
    ) -> MemoryEntry | None:
        return await self.call(op.MEMORY, scope=scope, key=key, as_of=as_of, known_at=known_at)

    async def memories(
        self,
        scope: Scope | str,
        prefix: str | None = None,
        *,
        as_of: When | None = None,
        known_at: When | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> MemoryEntryPage:
        return await self.call(
            op.MEMORIES,
            scope=scope,
            prefix=prefix,
            as_of=as_of,
            known_at=known_at,
            limit=limit,
            after=after,
        )

    async def memory_set(
        self,
        scope: Scope | str,
        key: str,
        value: Any,
        *,
        ttl_seconds: int | None = None,
        embed: bool | None = None,
        embed_text: str | None = None,
        observed_at: When | None = None,
        valid_at: When | None = None,
        invalid_at: When | None = None,
        pinned: bool | None = None,
    ) -> MemoryEntry:
        return await self.call(
            op.MEMORY_SET,
            scope=scope,
            key=key,
            value=value,
            ttl_seconds=ttl_seconds,
            embed=embed,
            embed_text=embed_text,
            observed_at=observed_at,
            valid_at=valid_at,
            invalid_at=invalid_at,
            pinned=pinned,
        )

    async def memory_delete(self, scope: Scope | str, key: str) -> DeleteResult:
        return await self.call(op.MEMORY_DELETE, scope=scope, key=key)

    async def memory_history(
        self, scope: Scope | str, key: str, *, limit: int | None = None, after: str | None = None
    ) -> MemoryVersionPage:
        return await self.call(op.MEMORY_HISTORY, scope=scope, key=key, limit=limit, after=after)

    async def search(
        self, scope: Scope | str, query: str, **options: Unpack[RecallOptions]
    ) -> RecallResult:
        return await self.call(op.SEARCH, scope=scope, query=query, **options)

    async def recall(
        self, scope: Scope | str, query: str, **options: Unpack[RecallOptions]
    ) -> RecallResult:
        return await self.call(op.RECALL, scope=scope, query=query, **options)

    async def context(
        self,
        scope: Scope | str,
        query: str,
        *,
        budget_tokens: int | None = None,
        also_scopes: Sequence[Scope | str] | None = None,
        as_of: When | None = None,
        known_at: When | None = None,
        min_score: float | None = None,
    ) -> ContextBlock:
        return await self.call(
            op.CONTEXT,
            scope=scope,
            query=query,
            budget_tokens=budget_tokens,
            also_scopes=also_scopes,
            as_of=as_of,
            known_at=known_at,
            min_score=min_score,
        )

    async def memory_file(
        self, scope: Scope | str, path: str, *, view_range: Sequence[int] | None = None
    ) -> MemoryFileAnswer:
        found = None if view_range is None else list(view_range)
        return await self.call(op.MEMORY_FILE, scope=scope, path=path, view_range=found)

    async def update_memory_file(
        self, scope: Scope | str, command: MemoryFileCommandInput
    ) -> MemoryFileAnswer:
        return await self.call(op.UPDATE_MEMORY_FILE, scope=scope, command=command)

    async def fact_conflicts(
        self,
        scope: Scope | str,
        *,
        verdicts: Sequence[PairVerdict | str] | None = None,
        pending: bool = False,
        limit: int | None = None,
        after: str | None = None,
    ) -> FactConflictPage:
        """Pairs of close facts and what the operator's model judged of them, newest first."""
        chosen = None if verdicts is None else list(verdicts)
        return await self.call(
            op.FACT_CONFLICTS,
            scope=scope,
            verdicts=chosen,
            pending=pending,
            limit=limit,
            after=after,
        )

    async def judge_conflicts(
        self, scope: Scope | str, *, limit: int | None = None
    ) -> JudgeConflictsResult:
        """Ask the operator's model now about the scope's oldest pending pairs (report-only);
        ``UNAVAILABLE`` when the server has no model configured."""
        return await self.call(op.JUDGE_CONFLICTS, scope=scope, limit=limit)

    async def entity_duplicates(
        self, scope: Scope | str, *, limit: int | None = None, after: str | None = None
    ) -> EntityDuplicatePage:
        return await self.call(op.ENTITY_DUPLICATES, scope=scope, limit=limit, after=after)

    async def entity_merges(
        self, scope: Scope | str, entity_id: str, *, limit: int | None = None
    ) -> list[EntityMerge]:
        return await self.call(op.ENTITY_MERGES, scope=scope, entity_id=entity_id, limit=limit)

    async def merge_entities(
        self, scope: Scope | str, keep_id: str, merge_ids: Sequence[str]
    ) -> Entity:
        return await self.call(
            op.MERGE_ENTITIES, scope=scope, keep_id=keep_id, merge_ids=list(merge_ids)
        )

    async def unmerge_entities(self, scope: Scope | str, merge_id: str) -> list[Entity]:
        return await self.call(op.UNMERGE_ENTITIES, scope=scope, merge_id=merge_id)

    async def assert_facts(
        self, scope: Scope | str, facts: Sequence[FactInput], *, place: bool | None = None
    ) -> list[FactAssertion]:
        return await self.call(op.ASSERT_FACTS, scope=scope, facts=list(facts), place=place)

    async def facts(
        self,
        scope: Scope | str,
        *,
        subject: EntityInput | None = None,
        predicate: str | None = None,
        as_of: When | None = None,
        known_at: When | None = None,
        include_retired: bool | None = None,
        include_refuted: bool | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> FactPage:
        return await self.call(
            op.FACTS,
            scope=scope,
            subject=subject,
            predicate=predicate,
            as_of=as_of,
            known_at=known_at,
            include_retired=include_retired,
            include_refuted=include_refuted,
            limit=limit,
            after=after,
        )

    async def import_document(
        self,
        scope: Scope | str,
        markdown: str,
        *,
        title: str | None = None,
        path: str | None = None,
        observed_at: When | None = None,
        new_document: bool | None = None,
    ) -> Document:
        return await self.call(
            op.IMPORT_DOCUMENT,
            scope=scope,
            markdown=markdown,
            title=title,
            path=path,
            observed_at=observed_at,
            new_document=new_document,
        )

    async def document(
        self,
        scope: Scope | str,
        id: str,
        *,
        revision: int | None = None,
        known_at: When | None = None,
    ) -> Document | None:
        return await self.call(
            op.DOCUMENT, scope=scope, id=id, revision=revision, known_at=known_at
        )

    async def harvest(
        self, spans: Sequence[SpanInput], compaction_generation: int
    ) -> HarvestReceipt:
        return await self.call(
            op.HARVEST, spans=list(spans), compaction_generation=compaction_generation
        )

    async def sql_query(
        self, scope: Scope | str, statement: str, args: Any = None
    ) -> SqlQueryResult:
        return await self.call(op.SQL_QUERY, scope=scope, statement=statement, args=args)


__all__ = ["AsyncClient"]
