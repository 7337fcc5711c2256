"""The embedded SQL Memory backend: one SQLite file per scope owner.

Every call validates its statements first (nothing runs if one is refused), then runs them on a
pooled connection that is hardened (limits, ``trusted_schema=OFF``) and guarded by the
authorizer in the call's mode. Writes to one file are serialised (an async lock per file, so
waiting writers hold no worker thread, and a thread lock for direct callers); readers run
concurrently on their own connections (WAL). A batch is one ``BEGIN IMMEDIATE`` transaction:
an error anywhere rolls all of it back. The size quota is ``max_page_count``: a write that
would grow the file past it fails inside SQLite and the batch is rolled back.

Result limits hold while rows are produced, never after the fact: ``SQLITE_LIMIT_LENGTH``
(``max_value_bytes``) stops any value, row or intermediate string from being built beyond it
inside SQLite; the result width is read from the compiled statement before it runs
(``max_columns``); each fetched row is measured as the JSON it becomes before it is converted,
and fetching stops before the row that would take the response past ``max_result_bytes`` (or
past ``max_rows``) with ``truncated_by`` naming the limit. So one query holds at most one row
of ``max_columns x max_value_bytes`` beyond the result it returns.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.errors import InvalidArgument
from palimpsest.identity import ScopeRef
from palimpsest.sqlmem import codec, files
from palimpsest.sqlmem.authorizer import (
    DEFAULT_MAX_VALUE_BYTES,
    Authorizer,
    Mode,
    check_new_views,
    deadline,
    harden,
    install,
    result_width,
    trusted,
)
from palimpsest.sqlmem.base import DatabaseInfo, ExecResult, QueryResult, Statement
from palimpsest.sqlmem.limits import capped_rows, check_width
from palimpsest.sqlmem.translate import Failure, translate
from palimpsest.sqlmem.validator import Kind, check_exec, check_query

MAX_BATCH = 100
DEFAULT_MAX_RESULT_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_COLUMNS = 100
_POOL_PER_FILE = 4
_OPEN_FILES = 64  # files with idle connections kept open; the least recently used close
_BUSY_TIMEOUT_S = 5.0
_SETUP = ("PRAGMA trusted_schema=OFF", "PRAGMA foreign_keys=ON", "PRAGMA auto_vacuum=FULL")


@dataclass
class _Slot:
    """Per-file state: the writer lock and idle connections."""

    write: threading.Lock = field(default_factory=threading.Lock)
    idle: list[sqlite3.Connection] = field(default_factory=list)
    users: int = 0


class SqliteStore:
    def __init__(
        self,
        root: Path,
        *,
        max_rows: int,
        timeout_ms: int,
        max_bytes: int,
        max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES,
        max_result_bytes: int = DEFAULT_MAX_RESULT_BYTES,
        max_columns: int = DEFAULT_MAX_COLUMNS,
    ) -> None:
        # No I/O here: the directory and files are made on first use.
        self.root = root
        self.max_rows = max_rows
        self.timeout_ms = timeout_ms
        self.max_bytes = max_bytes
        self.max_value_bytes = max_value_bytes
        self.max_result_bytes = max_result_bytes
        self.max_columns = max_columns
        self._slots: OrderedDict[str, _Slot] = OrderedDict()
        self._mutex = threading.Lock()
        self._writers: dict[str, tuple[anyio.Lock, int]] = {}

    @classmethod
    def from_settings(cls, settings: Settings) -> SqliteStore:
        return cls(
            settings.home / "sql",
            max_rows=settings.sql_max_rows,
            timeout_ms=settings.sql_timeout_ms,
            max_bytes=settings.sql_max_db_bytes,
            max_value_bytes=settings.sql_max_value_bytes,
            max_result_bytes=settings.sql_max_result_bytes,
            max_columns=settings.sql_max_columns,
        )

    # -- async interface (blocking work runs in worker threads) --------------------------

    async def query(self, ref: ScopeRef, sql: str, args: Any) -> QueryResult:
        return await anyio.to_thread.run_sync(self.query_sync, ref, sql, args)

    async def execute(self, ref: ScopeRef, batch: Sequence[Statement]) -> list[ExecResult]:
        async with self._writer(ref.scope_key):
            return await anyio.to_thread.run_sync(self.execute_sync, ref, batch)

    async def databases(self) -> list[DatabaseInfo]:
        return await anyio.to_thread.run_sync(files.list_databases, self.root)

    async def erase(self, key: str) -> int | None:
        async with self._writer(files.check_key(key)):
            return await anyio.to_thread.run_sync(self.erase_sync, key)

    # -- synchronous core -----------------------------------------------------------------

    def query_sync(self, ref: ScopeRef, sql: str, args: Any) -> QueryResult:
        checked = check_query(sql)
        params = codec.bind(args)
        started = time.monotonic()
        with self._connection(ref, create=False) as conn:
            guard = install(conn, Mode.READ)
            cursor = None
            try:
                with deadline(conn, self.timeout_ms):
                    self._check_width(result_width(conn, checked.sql, params))
                    cursor = conn.execute(checked.sql, params)
                    columns = [d[0] for d in cursor.description or ()]
                    self._check_width(len(columns))  # the schema may have changed meanwhile
                    rows, truncated_by = self._fetch(cursor)
            except sqlite3.Error as e:
                raise translate(e, self._failure(guard, started)) from e
            finally:
                if cursor is not None:
                    cursor.close()  # ends the read snapshot
        return QueryResult(
            columns=columns,
            rows=rows,
            truncated=truncated_by is not None,
            truncated_by=truncated_by,
        )

    def execute_sync(self, ref: ScopeRef, batch: Sequence[Statement]) -> list[ExecResult]:
        if not 1 <= len(batch) <= MAX_BATCH:
            raise InvalidArgument(f"a batch holds 1 to {MAX_BATCH} statements, not {len(batch)}")
        # Validate everything first: a refused statement anywhere means nothing runs.
        work = [(check_exec(s.sql), codec.bind(s.args)) for s in batch]
        slot = self._slot(ref.scope_key)
        try:
            with slot.write, self._connection(ref, create=True, slot=slot) as conn:
                return self._run_batch(conn, work)
        finally:
            self._release(ref.scope_key, slot)

    def erase_sync(self, key: str) -> int | None:
        slot = self._slot(files.check_key(key))
        try:
            with slot.write:
                with self._mutex:
                    # Unregister the slot: connections still in use are closed when returned.
                    idle, slot.idle = slot.idle, []
                    if self._slots.get(key) is slot:
                        del self._slots[key]
                for conn in idle:
                    conn.close()
                return files.remove(self.root, key)
        finally:
            self._release(key, slot)

    def close(self) -> None:
        with self._mutex:
            slots, self._slots = list(self._slots.values()), OrderedDict()
        for slot in slots:
            for conn in slot.idle:
                conn.close()
            slot.idle.clear()

    # -- internals --------------------------------------------------------------------------

    def _run_batch(
        self, conn: sqlite3.Connection, work: list[tuple[Any, codec.Params]]
    ) -> list[ExecResult]:
        guard = install(conn, Mode.WRITE)
        with trusted(conn, guard):
            conn.execute("BEGIN IMMEDIATE")
            before = self._size(conn)
        started = time.monotonic()
        results: list[ExecResult] = []
        try:
            with deadline(conn, self.timeout_ms):
                for checked, params in work:
                    cursor = conn.execute(checked.sql, params)
                    rowid = cursor.lastrowid if checked.kind is Kind.INSERT else None
                    done = ExecResult(max(cursor.rowcount, 0), rowid)
                    cursor.close()
                    check_new_views(conn, guard)
                    results.append(done)
            with trusted(conn, guard):
                conn.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback(conn, guard)
            failure = self._failure(guard, started, statement=len(results), before=before)
            raise translate(e, failure) from e
        except BaseException:
            self._rollback(conn, guard)
            raise
        return results

    def _check_width(self, width: int) -> None:
        check_width(width, self.max_columns)

    def _fetch(self, cursor: sqlite3.Cursor) -> tuple[list[list[Any]], str | None]:
        """Rows up to the row cap and the result size cap; the limit that stopped them."""
        return capped_rows(cursor, self.max_rows, self.max_result_bytes)

    def _failure(
        self, guard: Authorizer, started: float, statement: int = 0, before: int | None = None
    ) -> Failure:
        return Failure(
            denied=guard.denied,
            statement=statement,
            elapsed_ms=round((time.monotonic() - started) * 1000),
            timeout_ms=self.timeout_ms,
            quota_bytes=self.max_bytes,
            current_bytes=before,
            max_value_bytes=self.max_value_bytes,
        )

    @staticmethod
    def _rollback(conn: sqlite3.Connection, guard: Authorizer) -> None:
        if conn.in_transaction:
            with trusted(conn, guard):
                conn.execute("ROLLBACK")

    @staticmethod
    def _size(conn: sqlite3.Connection) -> int:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        return int(pages) * int(page_size)

    @contextmanager
    def _connection(
        self, ref: ScopeRef, *, create: bool, slot: _Slot | None = None
    ) -> Iterator[sqlite3.Connection]:
        """A pooled connection to the scope's file; for a read of a file not yet created, an
        empty in-memory database with the same hardening (reads never create files)."""
        path = files.db_path(self.root, ref.scope_key)
        if not create and not path.exists():
            memory = self._open(":memory:")
            try:
                yield memory
            finally:
                memory.close()
            return
        own = slot is None
        slot = slot or self._slot(ref.scope_key)
        conn: sqlite3.Connection | None = None
        try:
            with self._mutex:
                conn = slot.idle.pop() if slot.idle else None
            if conn is None:
                if create:
                    files.ensure_owner_record(self.root, ref)
                conn = self._open(str(path))
            yield conn
        finally:
            if conn is not None:
                self._give_back(ref.scope_key, slot, conn)
            if own:
                self._release(ref.scope_key, slot)

    def _open(self, target: str) -> sqlite3.Connection:
        conn = sqlite3.connect(
            target, isolation_level=None, check_same_thread=False, timeout=_BUSY_TIMEOUT_S
        )
        try:
            harden(conn, self.max_value_bytes)
            for pragma in _SETUP:
                conn.execute(pragma)
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            if self.max_bytes:
                page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
                pages = max(1, self.max_bytes // page_size)
                conn.execute(f"PRAGMA max_page_count={pages}").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn

    def _slot(self, key: str) -> _Slot:
        with self._mutex:
            slot = self._slots.setdefault(key, _Slot())
            self._slots.move_to_end(key)
            slot.users += 1
            return slot

    def _release(self, key: str, slot: _Slot) -> None:
        with self._mutex:
            slot.users -= 1
            if slot.users == 0 and not slot.idle and self._slots.get(key) is slot:
                del self._slots[key]

    def _give_back(self, key: str, slot: _Slot, conn: sqlite3.Connection) -> None:
        with self._mutex:
            # A slot dropped from the registry (erased or closed) keeps no connections.
            keep = self._slots.get(key) is slot and len(slot.idle) < _POOL_PER_FILE
            if keep and not conn.in_transaction:
                slot.idle.append(conn)
                stale = self._evict()
            else:
                stale = [conn]
        for c in stale:
            c.close()

    def _evict(self) -> list[sqlite3.Connection]:
        """Drop the least recently used unused slots beyond the open-file budget (under mutex)."""
        stale: list[sqlite3.Connection] = []
        for key in list(self._slots):
            if len(self._slots) <= _OPEN_FILES:
                break
            slot = self._slots[key]
            if slot.users == 0:
                stale += slot.idle
                del self._slots[key]
        return stale

    @asynccontextmanager
    async def _writer(self, key: str) -> AsyncIterator[None]:
        """One writer per file at the async level, so queued writers hold no thread."""
        lock, n = self._writers.get(key) or (anyio.Lock(), 0)
        self._writers[key] = (lock, n + 1)
        try:
            async with lock:
                yield
        finally:
            lock, n = self._writers[key]
            if n == 1:
                del self._writers[key]
            else:
                self._writers[key] = (lock, n - 1)
