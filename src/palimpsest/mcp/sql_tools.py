"""MCP tools over SQL Memory (each scope's own database): one read-only query, or a batch of
writes in one transaction. Thin over ``resolvers/sql.py``, behind GraphQL's ``sqlQuery`` and
``sqlExec``."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from palimpsest import sqlmem
from palimpsest.identity import Scope
from palimpsest.mcp.hints import READS, writes
from palimpsest.mcp.render import plain
from palimpsest.mcp.strict_args import ToolInput
from palimpsest.mcp.tools import Caller, ScopeArg
from palimpsest.resolvers import sql

SqlArgs = Annotated[
    list[Any] | dict[str, Any] | None,
    Field(
        description="Parameters: a list for `?` placeholders or an object for `:name`. Values "
        'are JSON scalars; a blob is {"$base64": "..."}.'
    ),
]


class SqlStatement(ToolInput):
    statement: str = Field(description="One DDL/DML statement (CREATE TABLE, INSERT, UPDATE...).")
    args: SqlArgs = None


class QueryResult(TypedDict):
    """Column names, rows as lists, and whether more rows existed than the cap."""

    columns: list[str]
    rows: list[list[Any]]
    truncated: bool


class ExecResult(TypedDict):
    """Per statement, in order: rows changed and the last inserted row id."""

    results: list[dict[str, Any]]


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add the SQL tools to ``server``."""

    @server.tool(
        description="Run one read-only SQL statement (SELECT or WITH ... SELECT) in the "
        "scope's own SQLite database. Rows are capped; `truncated` says when more existed.",
        annotations=READS,
    )
    async def sql_query(
        ctx: Context,
        statement: Annotated[str, Field(description="One SELECT statement.")],
        args: SqlArgs = None,
        scope: ScopeArg = Scope.USER,
    ) -> QueryResult:
        svc, who = await caller(ctx)
        r = await sql.query(svc, who, scope, statement, args)
        return {"columns": r.columns, "rows": r.rows, "truncated": r.truncated}

    @server.tool(
        description="Create tables and write rows in the scope's own SQLite database: 1-100 "
        "statements run as one transaction, all or none.",
        annotations=writes(destructive=True, idempotent=False),
    )
    async def sql_exec(
        ctx: Context,
        statements: Annotated[list[SqlStatement], Field(description="The batch, in order.")],
        scope: ScopeArg = Scope.USER,
    ) -> ExecResult:
        svc, who = await caller(ctx)
        batch = [sqlmem.SqlStatement(s.statement, s.args) for s in statements]
        results = await sql.execute(svc, who, scope, batch)
        return {"results": [plain(r) for r in results]}
