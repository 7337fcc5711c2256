"""The embedded SQL Memory backend: one SQLite file per scope owner.

Every call validates its statements first (nothing runs if one is refused), then runs them in a
worker process (``worker.py``, ``pool.py``) on a connection that is hardened (limits,
``trusted_schema=OFF``) and guarded by the authorizer in the call's mode; at the deadline a
worker that has not answered is killed, so no single function call outlives the time limit.
Writes to one file are serialised here, in the API process (an async lock per file, so
waiting writers hold no thread, and a thread lock for direct callers); readers run
concurrently in other workers (WAL). A batch is one ``BEGIN IMMEDIATE`` transaction: an error
anywhere, or the kill, rolls all of it back. The size quota is ``max_page_count``: a write that
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

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from palimpsest.errors import InvalidArgument, Unavailable
from palimpsest.identity import ScopeRef
from palimpsest.sqlmem.core import codec, dump
from palimpsest.sqlmem.core.base import DatabaseInfo, ExecResult, QueryResult, SqlStatement
from palimpsest.sqlmem.core.writers import ThreadWriters, Writers
from palimpsest.sqlmem.sqlite import files
from palimpsest.sqlmem.sqlite.authorizer import DEFAULT_MAX_VALUE_BYTES
from palimpsest.sqlmem.sqlite.pool import WorkerPool
from palimpsest.sqlmem.sqlite.validator import Kind, check_exec, check_query
from palimpsest.sqlmem.sqlite.worker import Batch, Forget, Limits, Query

if TYPE_CHECKING:
    from palimpsest.config import Settings

MAX_BATCH = 100
DEFAULT_MAX_RESULT_BYTES = 8 * 1024 * 1024
DEFAULT_MAX_COLUMNS = 100
DEFAULT_WORKERS = 2


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
        workers: int = DEFAULT_WORKERS,
    ) -> None:
        # No I/O here: the directory and files are made on first use, workers when first needed.
        self.root = root
        self.max_rows = max_rows
        self.timeout_ms = timeout_ms
        self.max_bytes = max_bytes
        self.max_value_bytes = max_value_bytes
        self.max_result_bytes = max_result_bytes
        self.max_columns = max_columns
        limits = Limits(
            max_rows, timeout_ms, max_bytes, max_value_bytes, max_result_bytes, max_columns
        )
        self._pool = WorkerPool(limits, workers)
        # One writer per file: at the async level (queued writers hold no thread), and for
        # direct (thread) callers.
        self._writers = Writers()
        self._thread_writers = ThreadWriters()

    @classmethod
    def from_settings(cls, settings: Settings) -> SqliteStore:
        return cls(
            settings.home / "sql",
            max_rows=settings.sql.max_rows,
            timeout_ms=settings.sql.timeout_ms,
            max_bytes=settings.sql.max_db_bytes,
            max_value_bytes=settings.sql.max_value_bytes,
            max_result_bytes=settings.sql.max_result_bytes,
            max_columns=settings.sql.max_columns,
            workers=settings.sql.workers,
        )

    # -- async interface (blocking work runs in worker threads) --------------------------
    # What waits for a worker process runs on the pool's limiter: callers beyond its workers
    # queue here, holding no thread of the default limiter the rest of the server shares.

    async def query(self, ref: ScopeRef, sql: str, args: Any) -> QueryResult:
        limiter = self._pool.limiter
        return await anyio.to_thread.run_sync(self.query_sync, ref, sql, args, limiter=limiter)

    async def execute(self, ref: ScopeRef, batch: Sequence[SqlStatement]) -> list[ExecResult]:
        async with self._writers.hold(ref.scope_key):
            limiter = self._pool.limiter
            return await anyio.to_thread.run_sync(self.execute_sync, ref, batch, limiter=limiter)

    async def databases(self) -> list[DatabaseInfo]:
        return await anyio.to_thread.run_sync(files.list_databases, self.root)

    async def erase(self, key: str) -> int | None:
        async with self._writers.hold(files.check_key(key)):
            limiter = self._pool.limiter
            return await anyio.to_thread.run_sync(self.erase_sync, key, limiter=limiter)

    async def dump(self, key: str) -> list[dict[str, Any]]:
        path = files.db_path(self.root, key)
        async with self._writers.hold(key):
            return await anyio.to_thread.run_sync(dump.dump, path)

    async def ping(self) -> None:
        """Files are made on first use: ready while the SQL directory (if made) is writable."""
        if self.root.exists() and not os.access(self.root, os.W_OK | os.X_OK):
            raise Unavailable("the SQL Memory directory is not writable")

    async def warm(self) -> None:
        """Every worker process started and answering: a broadcast waits for each, and
        forgetting a file no worker holds (no scope's name) changes nothing."""
        await anyio.to_thread.run_sync(self._pool.broadcast, Forget(str(self.root / ".warmup")))

    # -- synchronous core -----------------------------------------------------------------

    def query_sync(self, ref: ScopeRef, sql: str, args: Any) -> QueryResult:
        checked = check_query(sql)
        params = codec.bind(args)
        path = files.db_path(self.root, ref.scope_key)
        result: QueryResult = self._pool.run(Query(str(path), checked.sql, params))
        return result

    def execute_sync(self, ref: ScopeRef, batch: Sequence[SqlStatement]) -> list[ExecResult]:
        if not 1 <= len(batch) <= MAX_BATCH:
            raise InvalidArgument(f"a batch holds 1 to {MAX_BATCH} statements, not {len(batch)}")
        # Validate everything first: a refused statement anywhere means nothing runs.
        work = []
        for s in batch:
            checked = check_exec(s.sql)
            work.append((checked.sql, checked.kind is Kind.INSERT, codec.bind(s.args)))
        path = files.db_path(self.root, ref.scope_key)
        with self._thread_writers.hold(ref.scope_key):
            files.ensure_owner_record(self.root, ref)
            results: list[ExecResult] = self._pool.run(Batch(str(path), work))
            return results

    def erase_sync(self, key: str) -> int | None:
        path = files.db_path(self.root, key)
        with self._thread_writers.hold(key):
            # No worker may keep the file open: closing a connection to an erased file later
            # would delete the WAL of a new file of the same name.
            self._pool.broadcast(Forget(str(path)))
            return files.remove(self.root, key)

    def close(self) -> None:
        self._pool.close()
