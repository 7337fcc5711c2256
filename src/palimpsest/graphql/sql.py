"""GraphQL fields of SQL Memory. Resolvers only translate; logic is in resolvers/sql.py."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import strawberry
from strawberry.scalars import JSON

from palimpsest import paging
from palimpsest.graphql.context import Info
from palimpsest.graphql.scalars import Int64
from palimpsest.graphql.types import AfterArg, LimitArg, Page, Scope, page_of
from palimpsest.resolvers import sql as ops
from palimpsest.sqlmem import DatabaseInfo, ExecResult, SqlStatement

ARGS_HELP = (
    "Parameters: a list for `?` placeholders, or an object for `:name` / `@name` / `$name`. "
    'Values are JSON scalars; a blob is `{"$base64": "..."}`.'
)


@strawberry.input(description="One statement of an sqlExec batch.")
class SqlStatementInput:
    statement: str = strawberry.field(description="One DDL/DML statement (no ';' chains).")
    args: JSON | None = strawberry.field(default=None, description=ARGS_HELP)


@strawberry.type(description="Rows of one read-only query.")
class SqlQueryResult:
    columns: list[str]
    rows: list[list[JSON | None]] = strawberry.field(
        description='Values as JSON; blobs are `{"$base64": "..."}`, infinities '
        '`{"$float": "Infinity"}`.'
    )
    truncated: bool = strawberry.field(
        description="True when the rows stop early: more rows existed than the row cap, or the "
        "next row would have taken the result past its size cap."
    )
    truncated_by: str | None = strawberry.field(
        default=None,
        description="The limit that stopped the rows (`sqlMaxRows` or `sqlMaxResultBytes`); "
        "null when the result is whole.",
    )


@strawberry.type
class SqlStatementResult:
    rows_affected: Int64
    last_insert_id: Int64 | None = strawberry.field(
        description="The row id of the last inserted row; null for statements other than INSERT."
    )

    @classmethod
    def of(cls, r: ExecResult) -> SqlStatementResult:
        rowid = None if r.last_insert_id is None else Int64(r.last_insert_id)
        return cls(rows_affected=Int64(r.rows_affected), last_insert_id=rowid)


@strawberry.type(description="The batch committed; one result per statement, in order.")
class SqlExecResult:
    results: list[SqlStatementResult]


@strawberry.type(description="One scope's SQL database, as an admin sees it.")
class SqlDatabase:
    id: strawberry.ID = strawberry.field(description="Opaque; pass to sqlErase.")
    scope: Scope | None
    tenant: str | None
    owner: str | None = strawberry.field(description="Agent name, user id or tenant id.")
    bytes: Int64
    modified_at: datetime

    @classmethod
    def of(cls, d: DatabaseInfo) -> SqlDatabase:
        return cls(
            id=strawberry.ID(d.key),
            scope=d.scope,
            tenant=d.tenant_id,
            owner=d.owner_id,
            bytes=Int64(d.bytes),
            modified_at=d.modified_at,
        )


@strawberry.type
class SqlEraseResult:
    erased: bool
    bytes: Int64 = strawberry.field(description="Bytes freed on disk.")


@strawberry.type
class SqlQuery:
    @strawberry.field(
        description="Run one read-only statement (SELECT, or WITH ... SELECT) in the scope's "
        "own SQL database. Rows are capped; `truncated` says when more existed."
    )
    async def sql_query(
        self,
        info: Info,
        scope: Scope,
        statement: str,
        args: Annotated[JSON | None, strawberry.argument(description=ARGS_HELP)] = None,
    ) -> SqlQueryResult:
        c = info.context
        r = await ops.query(c.services, c.principal, scope, statement, args)
        return SqlQueryResult(
            columns=r.columns, rows=r.rows, truncated=r.truncated, truncated_by=r.truncated_by
        )

    @strawberry.field(
        description="Admin: the SQL databases of this tenant (scope TENANT), with their "
        "sizes; every tenant's (scope GLOBAL) needs the platform operator role. In id order, "
        f"paged (limit at most {ops.MAX_LIST_LIMIT})."
    )
    async def sql_databases(
        self,
        info: Info,
        scope: Scope = Scope.TENANT,
        limit: LimitArg = paging.DEFAULT_LIMIT,
        after: AfterArg = None,
    ) -> Page[SqlDatabase]:
        c = info.context
        found = await ops.databases(c.services, c.principal, scope, limit, after)
        return page_of(found, SqlDatabase.of)


@strawberry.type
class SqlMutation:
    @strawberry.mutation(
        description="Run DDL/DML statements in the scope's own SQL database as one atomic "
        "batch: if any statement fails, none of them has any effect."
    )
    async def sql_exec(
        self, info: Info, scope: Scope, statements: list[SqlStatementInput]
    ) -> SqlExecResult:
        c = info.context
        batch = [SqlStatement(s.statement, s.args) for s in statements]
        results = await ops.execute(c.services, c.principal, scope, batch)
        return SqlExecResult(results=[SqlStatementResult.of(r) for r in results])

    @strawberry.mutation(
        description="Admin: delete one SQL database, by an id from sqlDatabases listed with the "
        "same `scope` (TENANT: this tenant's; GLOBAL: any tenant's, operators only)."
    )
    async def sql_erase(
        self, info: Info, id: strawberry.ID, scope: Scope = Scope.TENANT
    ) -> SqlEraseResult:
        c = info.context
        freed = await ops.erase(c.services, c.principal, str(id), scope)
        return SqlEraseResult(erased=True, bytes=Int64(freed))
