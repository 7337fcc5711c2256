"""SQL Memory on PostgreSQL: a schema and a login role per scope, shared by every API replica.

Every call validates its statements first in the PostgreSQL dialect (``validator.py``; nothing
runs if one is refused), then runs them on a pooled connection authenticated as the scope's
own role (``admin.py``: what that role may do is layer 2). Statements go through the extended
protocol only, so the server itself refuses a second statement after a ``;``.

- A query is one ``READ ONLY`` transaction. Its width and column types are read first by
  running it under ``LIMIT 0`` (nothing is produced), and the column cap is checked; then it
  runs wrapped so that each value is measured in the server (``octet_length``) and one over
  ``max_value_bytes`` raises there, before it is sent. Rows are streamed one at a time and
  measured as the JSON they become; the stream stops (and the server is told to cancel)
  before the row that would pass ``max_rows`` or ``max_result_bytes``.
- A batch is one transaction: ``sqlmem_admin.begin_write()`` first (one writer per scope
  across replicas, and the schema's size), then each statement with the remaining time as
  its ``statement_timeout`` and the schema's size checked after it; any error, refusal or
  limit rolls all of it back (and a quota refusal compacts the scope's tables, so the
  rolled-back rows do not keep counting).
- Reads of a scope that has no role yet run as ``sqlmem_nobody`` on an empty schema, so they
  see an empty database and create nothing. A write provisions the role and schema.
- A pooled connection is pinged when taken: one whose role was erased (on any replica:
  erasure ends its sessions) is dropped and a new one opened.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

import anyio
import anyio.to_thread
import psycopg
from psycopg import RawCursor
from psycopg.pq import TransactionStatus
from psycopg.types.string import TextLoader

from palimpsest.config import Settings
from palimpsest.errors import InvalidArgument, QuotaExceeded, Unavailable
from palimpsest.identity import ScopeRef
from palimpsest.sqlmem.core import codec
from palimpsest.sqlmem.core.base import DatabaseInfo, ExecResult, QueryResult, SqlStatement
from palimpsest.sqlmem.core.failure import Failure
from palimpsest.sqlmem.core.limits import capped_rows, check_width
from palimpsest.sqlmem.core.writers import Writers
from palimpsest.sqlmem.postgres.admin import (
    EMPTY_ROLE,
    Admin,
    check_key,
    role_password,
)
from palimpsest.sqlmem.postgres.binding import bind, guarded
from palimpsest.sqlmem.postgres.errors import translate
from palimpsest.sqlmem.postgres.hardening import EMPTY_SCHEMA
from palimpsest.sqlmem.postgres.validator import check_exec, check_query

MAX_BATCH = 100
_IDLE_PER_SCOPE = 2
# Results keep these types; every other type is read as PostgreSQL's text form (json and
# jsonb as text, like SQLite; dates, arrays, uuids as their literal text).
_NATIVE = {"int2", "int4", "int8", "oid", "float4", "float8", "numeric", "bool", "bytea"}


def _loaders(conn: psycopg.Connection[Any]) -> None:
    for info in psycopg.postgres.types:
        if info.name not in _NATIVE:
            conn.adapters.register_loader(info.oid, TextLoader)
        if info.array_oid:
            conn.adapters.register_loader(info.array_oid, TextLoader)


class PostgresStore:
    def __init__(
        self,
        conninfo: dict[str, Any],
        *,
        max_rows: int,
        timeout_ms: int,
        max_bytes: int,
        max_value_bytes: int,
        max_result_bytes: int,
        max_columns: int,
        pool_size: int = 16,
    ) -> None:
        self.admin = Admin(conninfo, timeout_ms)
        self._server = {k: conninfo[k] for k in ("host", "port", "dbname")}
        self.max_rows = max_rows
        self.timeout_ms = timeout_ms
        self.max_bytes = max_bytes
        self.max_value_bytes = max_value_bytes
        self.max_result_bytes = max_result_bytes
        self.max_columns = max_columns
        self._idle: OrderedDict[str, list[psycopg.Connection[Any]]] = OrderedDict()
        self._mutex = threading.Lock()
        self._slots = threading.BoundedSemaphore(pool_size)
        self._pool_size = pool_size
        self._writers = Writers()  # one writer per scope in this process

    @classmethod
    def from_settings(cls, settings: Settings) -> PostgresStore:
        return cls(
            settings.postgres_conninfo(),
            max_rows=settings.sql.max_rows,
            timeout_ms=settings.sql.timeout_ms,
            max_bytes=settings.sql.max_db_bytes,
            max_value_bytes=settings.sql.max_value_bytes,
            max_result_bytes=settings.sql.max_result_bytes,
            max_columns=settings.sql.max_columns,
            pool_size=settings.sql.postgres_pool_size,
        )

    def prepare(self) -> None:
        """Harden the database (once per version, whichever replica comes first)."""
        self.admin.harden()

    # -- async interface (blocking work runs in worker threads) --------------------------

    async def query(self, ref: ScopeRef, sql: str, args: Any) -> QueryResult:
        return await anyio.to_thread.run_sync(self.query_sync, ref, sql, args)

    async def execute(self, ref: ScopeRef, batch: Sequence[SqlStatement]) -> list[ExecResult]:
        async with self._writers.hold(ref.scope_key):
            return await anyio.to_thread.run_sync(self.execute_sync, ref, batch)

    async def databases(self) -> list[DatabaseInfo]:
        return await anyio.to_thread.run_sync(self.admin.databases)

    async def erase(self, key: str) -> int | None:
        async with self._writers.hold(check_key(key)):
            return await anyio.to_thread.run_sync(self.erase_sync, key)

    async def dump(self, key: str) -> list[dict[str, Any]]:
        # PostgreSQL keeps no statement text per table to replay; refusing beats an export
        # that silently leaves the SQL plane out.
        raise Unavailable(
            "exporting SQL Memory is not supported on the PostgreSQL backend yet; "
            "the SQLite backend exports it"
        )

    # -- synchronous core -----------------------------------------------------------------

    def query_sync(self, ref: ScopeRef, sql: str, args: Any) -> QueryResult:
        checked = check_query(sql)
        params = bind(checked, codec.bind(args), self.max_value_bytes)
        started = time.monotonic()
        with self._session(ref, write=False) as conn:
            try:
                conn.execute("BEGIN READ ONLY")
                self._limit_time(conn, started)
                cur = RawCursor(conn)
                with conn.pipeline():  # extended protocol: one statement, whatever the text
                    # the inner text is agent SQL that passed layer 1; it runs as the scope role
                    cur.execute(f"SELECT * FROM (\n{checked.sql}\n) AS q LIMIT 0", params)  # noqa: S608
                types = [(d.name, d.type_code) for d in cur.description or ()]
                check_width(len(types), self.max_columns)
                stream = cast(
                    "Generator[Any, None, None]",
                    cur.stream(guarded(checked.sql, types, self.max_value_bytes), params),
                )
                try:
                    rows, truncated_by = capped_rows(stream, self.max_rows, self.max_result_bytes)
                finally:
                    stream.close()  # stops the server early when the rows were capped
            except psycopg.Error as e:
                raise translate(e, self._failure(started)) from e
            finally:
                self._end(conn, commit=False)
        return QueryResult(
            columns=[name for name, _ in types],
            rows=rows,
            truncated=truncated_by is not None,
            truncated_by=truncated_by,
        )

    def execute_sync(self, ref: ScopeRef, batch: Sequence[SqlStatement]) -> list[ExecResult]:
        if not 1 <= len(batch) <= MAX_BATCH:
            raise InvalidArgument(f"a batch holds 1 to {MAX_BATCH} statements, not {len(batch)}")
        work = [
            (c := check_exec(s.sql), bind(c, codec.bind(s.args), self.max_value_bytes))
            for s in batch
        ]
        started = time.monotonic()
        results: list[ExecResult] = []
        over_quota = False
        before = 0
        with self._session(ref, write=True) as conn:
            committed = False
            try:
                conn.execute("BEGIN")
                before = int(conn.execute("SELECT sqlmem_admin.begin_write()").fetchone()[0])  # type: ignore[index]
                for checked, params in work:
                    self._limit_time(conn, started)
                    cur = RawCursor(conn)
                    with conn.pipeline():  # extended protocol: one statement, whatever the text
                        cur.execute(checked.sql, params)
                    results.append(ExecResult(max(cur.rowcount, 0), None))
                    if self.max_bytes:
                        size = conn.execute("SELECT sqlmem_admin.schema_bytes()").fetchone()
                        if size is not None and int(size[0]) > self.max_bytes:
                            over_quota = True
                            break
                if not over_quota:
                    conn.execute("SELECT sqlmem_admin.touch()")
                    conn.execute("COMMIT")
                    committed = True
            except psycopg.Error as e:
                raise translate(e, self._failure(started, len(results))) from e
            finally:
                if not committed:
                    self._end(conn, commit=False)
        if over_quota:
            # The rolled-back rows still occupy pages (heap and indexes); give them back.
            self.admin.compact(ref.scope_key)
            raise QuotaExceeded(
                f"SQL database quota of {self.max_bytes} bytes would be exceeded "
                f"(current={before}); the batch was rolled back",
                limit="sqlMaxDbBytes",
                quota=self.max_bytes,
                current=before,
                statement=len(results) - 1,
            )
        return results

    def erase_sync(self, key: str) -> int | None:
        with self._mutex:
            idle = self._idle.pop(check_key(key), [])
        for conn in idle:
            conn.close()
        return self.admin.erase(key)

    async def ping(self) -> None:
        await anyio.to_thread.run_sync(self.admin.ping)

    async def warm(self) -> None:
        """The administrative connection opened (scope connections are per scope)."""
        await self.ping()

    def close(self) -> None:
        with self._mutex:
            pools, self._idle = list(self._idle.values()), OrderedDict()
        for conns in pools:
            for conn in conns:
                conn.close()
        self.admin.close()

    # -- internals --------------------------------------------------------------------------

    def _limit_time(self, conn: psycopg.Connection[Any], started: float) -> None:
        """The batch's remaining time becomes the next statement's own timeout."""
        if self.timeout_ms <= 0:
            conn.execute("SET LOCAL statement_timeout = 0")
            return
        left = self.timeout_ms - int((time.monotonic() - started) * 1000)
        if left <= 0:
            raise QuotaExceeded(
                f"statement timeout of {self.timeout_ms} ms exceeded; nothing was changed",
                limit="statementTimeoutMs",
                timeoutMs=self.timeout_ms,
                elapsedMs=self.timeout_ms - left,
            )
        conn.execute(f"SET LOCAL statement_timeout = {int(left)}")

    def _failure(self, started: float, statement: int = 0) -> Failure:
        return Failure(
            denied=None,
            statement=statement,
            elapsed_ms=round((time.monotonic() - started) * 1000),
            timeout_ms=self.timeout_ms,
            quota_bytes=self.max_bytes,
            current_bytes=None,
            max_value_bytes=self.max_value_bytes,
        )

    @staticmethod
    def _end(conn: psycopg.Connection[Any], *, commit: bool) -> None:
        if conn.closed or conn.info.transaction_status is TransactionStatus.IDLE:
            return
        try:
            conn.execute("COMMIT" if commit else "ROLLBACK")
        except psycopg.Error:
            conn.close()  # a broken connection is dropped, never pooled

    @contextmanager
    def _session(self, ref: ScopeRef, *, write: bool) -> Iterator[psycopg.Connection[Any]]:
        key = check_key(ref.scope_key)
        with self._slot():
            conn, pool = self._take(key), key
            if conn is None or not self._alive(conn):
                conn, pool = self._connect(ref, write=write)
            try:
                yield conn
            finally:
                self._give_back(pool, conn)

    @contextmanager
    def _slot(self) -> Iterator[None]:
        self._slots.acquire()
        try:
            yield
        finally:
            self._slots.release()

    def _connect(self, ref: ScopeRef, *, write: bool) -> tuple[psycopg.Connection[Any], str]:
        key = ref.scope_key
        role, schema = self.admin.role_name(key), self.admin.schema_name(key)
        try:
            return self._open(role, schema), key
        except psycopg.OperationalError as e:
            if "password authentication failed" not in str(e):
                raise translate(e, self._failure(time.monotonic())) from e
        # No such role yet (or its password was changed): provision it for a write; a read
        # of a scope that was never written sees the empty schema.
        try:
            if write:
                self.admin.provision(ref)
            elif not self.admin.reset_password(role):
                empty = self._take(EMPTY_ROLE)
                return (empty or self._open(EMPTY_ROLE, EMPTY_SCHEMA)), EMPTY_ROLE
            return self._open(role, schema), key
        except psycopg.Error as e:
            raise translate(e, self._failure(time.monotonic())) from e

    def _open(self, role: str, schema: str) -> psycopg.Connection[Any]:
        conn = psycopg.connect(
            **self._server,
            user=role,
            password=role_password(self.admin.password, role),
            autocommit=True,
            connect_timeout=5,
            # No server-side prepared statements kept per connection: agent texts vary, and a
            # pooled connection then carries no plan across an agent's DDL.
            prepare_threshold=None,
            options=f"-c search_path={schema} -c statement_timeout={self.timeout_ms}",
        )
        _loaders(conn)
        return conn

    @staticmethod
    def _alive(conn: psycopg.Connection[Any]) -> bool:
        """A pooled connection still answers (erasure on any replica ends its sessions)."""
        if conn.closed:
            return False
        try:
            conn.execute("SELECT 1")
        except psycopg.Error:
            conn.close()
            return False
        return True

    def _take(self, pool: str) -> psycopg.Connection[Any] | None:
        with self._mutex:
            conns = self._idle.get(pool)
            if not conns:
                return None
            conn = conns.pop()
            if not conns:
                del self._idle[pool]
            return conn

    def _give_back(self, pool: str, conn: psycopg.Connection[Any]) -> None:
        if conn.closed or conn.info.transaction_status is not TransactionStatus.IDLE:
            conn.close()
            return
        stale: list[psycopg.Connection[Any]] = []
        with self._mutex:
            conns = self._idle.setdefault(pool, [])
            self._idle.move_to_end(pool)
            if len(conns) < _IDLE_PER_SCOPE:
                conns.append(conn)
            else:
                stale.append(conn)
            while sum(len(c) for c in self._idle.values()) > self._pool_size:
                _, oldest = self._idle.popitem(last=False)
                stale += oldest
        for c in stale:
            c.close()
