"""SQL Memory throughput per backend: small inserts and point selects through GraphQL over
HTTP, against the same statements on a bare connection of the same engine (autocommit: one
transaction per statement, as each sqlExec call is one).

- ``sqlite``: bare sqlite3 on a WAL file.
- ``postgres``: bare psycopg as the admin role on the same server, in a scratch schema
  (extended protocol, one statement per round trip, as the store sends them).

The API runs in-process under uvicorn on a free port, once per backend, on the configured
Neo4j and home; the benchmark writes to a fresh tenant's USER database and erases it
afterwards. Requests go one at a time over one keep-alive connection, so the figures are
latency-bound (no concurrency). ``ratio`` is graphql_ops_per_s / bare_ops_per_s: the share of
the bare engine's speed that remains after HTTP, GraphQL, token checks, validation and the
backend's guards (the SQLite authorizer; PostgreSQL's per-scope role, transaction, time limit,
size guard and quota check).
"""

from __future__ import annotations

import asyncio
import http.client
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.runtime import open_sql_store
from palimpsest.server import serve_in_thread

CREATE = "CREATE TABLE kv (k INTEGER PRIMARY KEY, v TEXT NOT NULL)"
INSERT = "INSERT INTO kv (k, v) VALUES (?, ?)"
SELECT = "SELECT v FROM kv WHERE k = ?"
EXEC_GQL = (
    "mutation($s: [SqlStatementInput!]!) { sqlExec(scope: USER, statements: $s) "
    "{ results { rowsAffected } } }"
)
QUERY_GQL = (
    "query($q: String!, $a: JSON) { sqlQuery(scope: USER, statement: $q, args: $a) { rows } }"
)


BACKENDS = ("sqlite", "postgres")


def run(
    settings: Settings,
    n: int = 2000,
    say: Callable[[str], None] | None = None,
    backends: Sequence[str] = BACKENDS,
) -> dict[str, object]:
    say = say or (lambda m: print(m, file=sys.stderr))
    # No access log per request; no rate limit: one principal is measured as fast as it goes.
    settings = settings.replace(log_level="WARNING", rate_limit_per_second=0)
    results: dict[str, object] = {"n": n}
    for backend in backends:
        results[backend] = _one_backend(settings.replace(sql_backend=backend), n, say)
    if "sqlite" in backends:
        # The acceptance interface's top-level figures are those of SQLite's inserts.
        insert = results["sqlite"]["insert"]  # type: ignore[index]
        results.update(
            graphql_ops_per_s=insert["graphql_ops_per_s"],
            sqlite_ops_per_s=insert["bare_ops_per_s"],
            ratio=insert["ratio"],
        )
    return results


def _one_backend(settings: Settings, n: int, say: Callable[[str], None]) -> dict[str, object]:
    backend = settings.sql.backend
    tenant, user = f"bench-{uuid.uuid4().hex[:8]}", "bench"
    token = mint(load_keys(settings), tenant=tenant, user=user, agent="bench", ttl_seconds=3600)
    create = CREATE if backend == "sqlite" else CREATE.replace("INTEGER", "BIGINT")
    say(f"{backend}: starting the API (Neo4j, embedding model) ...")
    with serve_in_thread(settings) as url:
        client = GraphQLClient(url, token)
        try:
            client.call(EXEC_GQL, s=[{"statement": create}])
            say(f"{backend} graphql: {n} inserts ...")
            gql_insert = _rate(n, lambda i: client.call(EXEC_GQL, s=[_insert(i)]))
            say(f"{backend} graphql: {n} point selects ...")
            gql_select = _rate(n, lambda i: client.call(QUERY_GQL, q=SELECT, a=[i]))
        finally:
            client.close()
            store = open_sql_store(settings)
            try:
                asyncio.run(store.erase(scope_key(tenant, Scope.USER, user)))
            finally:
                store.close()
    say(f"bare {backend}: {n} inserts and {n} point selects ...")
    bare_insert, bare_select = (
        _bare_sqlite(n) if backend == "sqlite" else _bare_postgres(settings, n)
    )
    return {"insert": _kind(gql_insert, bare_insert), "select": _kind(gql_select, bare_select)}


def _insert(i: int) -> dict[str, Any]:
    return {"statement": INSERT, "args": [i, f"value-{i}"]}


def _kind(graphql: float, bare: float) -> dict[str, float]:
    return {
        "graphql_ops_per_s": round(graphql, 1),
        "bare_ops_per_s": round(bare, 1),
        "ratio": round(graphql / bare, 5),
    }


def _rate(n: int, op: Callable[[int], object]) -> float:
    started = time.perf_counter()
    for i in range(n):
        op(i)
    return n / (time.perf_counter() - started)


def _bare_sqlite(n: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp:
        conn = sqlite3.connect(Path(tmp) / "bare.db", isolation_level=None)
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            conn.execute(CREATE)
            inserts = _rate(n, lambda i: conn.execute(INSERT, (i, f"value-{i}")))
            selects = _rate(n, lambda i: conn.execute(SELECT, (i,)).fetchall())
        finally:
            conn.close()
    return inserts, selects


def _bare_postgres(settings: Settings, n: int) -> tuple[float, float]:
    import psycopg

    from palimpsest.local.postgres import conninfo

    schema = f"bench_bare_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(**conninfo(settings), autocommit=True) as conn:  # type: ignore[arg-type]
        conn.execute(f"CREATE SCHEMA {schema}")
        try:
            conn.execute(f"SET search_path = {schema}")
            conn.execute(CREATE.replace("INTEGER", "BIGINT"))
            cur = psycopg.RawCursor(conn)
            insert, select = INSERT.replace("(?, ?)", "($1, $2)"), SELECT.replace("?", "$1")
            inserts = _rate(n, lambda i: cur.execute(insert, [i, f"value-{i}"]))
            selects = _rate(n, lambda i: cur.execute(select, [i]).fetchall())
        finally:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")
    return inserts, selects


class GraphQLClient:
    """One keep-alive HTTP/1.1 connection; stdlib only, so the bench needs no dev extras."""

    def __init__(self, url: str, token: str) -> None:
        port = int(url.rsplit(":", 1)[1])
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call(self, query: str, **variables: Any) -> Any:
        self.conn.request(
            "POST", "/graphql", orjson.dumps({"query": query, "variables": variables}), self.headers
        )
        body = orjson.loads(self.conn.getresponse().read())
        if body.get("errors"):
            raise RuntimeError(f"benchmark request failed: {body['errors'][0]['message']}")
        return body["data"]

    def close(self) -> None:
        self.conn.close()
