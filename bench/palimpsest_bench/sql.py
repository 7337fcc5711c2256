"""SQL Memory throughput: small inserts and point selects through GraphQL over HTTP, against the
same statements on a bare sqlite3 connection (WAL, autocommit: one transaction per statement,
as each sqlExec call is one).

The API runs in-process under uvicorn on a free port, on the configured Neo4j and home; the
benchmark writes to a fresh tenant's USER database and erases it afterwards. Requests go one at
a time over one keep-alive connection, so the figures are latency-bound (no concurrency).
``ratio`` is graphql_ops_per_s / sqlite_ops_per_s: the share of bare SQLite speed that remains
after HTTP, GraphQL, token checks, validation and the authorizer.
"""

from __future__ import annotations

import http.client
import sqlite3
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.server import serve_in_thread
from palimpsest.sqlmem import SqliteStore

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


def run(
    settings: Settings, n: int = 2000, say: Callable[[str], None] | None = None
) -> dict[str, object]:
    say = say or (lambda m: print(m, file=sys.stderr))
    # No access log per request; no rate limit: one principal is measured as fast as it goes.
    settings = settings.model_copy(update={"log_level": "WARNING", "rate_limit_per_second": 0})
    tenant, user = f"bench-{uuid.uuid4().hex[:8]}", "bench"
    token = mint(load_keys(settings), tenant=tenant, user=user, agent="bench", ttl_seconds=3600)
    say("starting the API (Neo4j, embedding model) ...")
    with serve_in_thread(settings) as url:
        client = GraphQLClient(url, token)
        try:
            client.call(EXEC_GQL, s=[{"statement": CREATE}])
            say(f"graphql: {n} inserts ...")
            gql_insert = _rate(n, lambda i: client.call(EXEC_GQL, s=[_insert(i)]))
            say(f"graphql: {n} point selects ...")
            gql_select = _rate(n, lambda i: client.call(QUERY_GQL, q=SELECT, a=[i]))
        finally:
            client.close()
            SqliteStore.from_settings(settings).erase_sync(scope_key(tenant, Scope.USER, user))
    say(f"bare sqlite3: {n} inserts and {n} point selects ...")
    lite_insert, lite_select = _bare_sqlite(n)
    insert = _kind(gql_insert, lite_insert)
    select = _kind(gql_select, lite_select)
    return {
        "n": n,
        "insert": insert,
        "select": select,
        # The acceptance interface's top-level figures are those of the inserts.
        "graphql_ops_per_s": insert["graphql_ops_per_s"],
        "sqlite_ops_per_s": insert["sqlite_ops_per_s"],
        "ratio": insert["ratio"],
    }


def _insert(i: int) -> dict[str, Any]:
    return {"statement": INSERT, "args": [i, f"value-{i}"]}


def _kind(graphql: float, sqlite: float) -> dict[str, float]:
    return {
        "graphql_ops_per_s": round(graphql, 1),
        "sqlite_ops_per_s": round(sqlite, 1),
        "ratio": round(graphql / sqlite, 5),
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
