"""The process that runs agent SQL on SQLite, so that a statement can be stopped for real.

SQLite checks its time limit (the progress handler) only between VM steps, and
``sqlite3_interrupt`` sets the flag those same steps read: one function call (``instr`` with a
long needle, ``LIKE`` with a long pattern, ``upper`` of a long value repeated in one row) runs
to its end whatever the limit. So agent statements run here, in a worker process of
``pool.py``, which the API process kills at the deadline; SQLite rolls the killed transaction
back from the WAL when the file is next opened. Everything a statement meets is as it was in
the API process: the same hardening, authorizer in the call's mode, value, width and result
limits, and the progress handler (which still ends ordinary long statements cleanly, without a
kill).

Started as ``python -c "from palimpsest.sqlmem.sqlite.worker import main; main()" <fd>`` (never
``-m``: requests must unpickle to this module's classes). Requests come over the socket
``<fd>`` and each gets one reply (a batch also sends which statement it has reached). The
worker never logs statement text or values. It exits when the API process closes the socket.
"""

from __future__ import annotations

import signal
import sqlite3
import sys
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from palimpsest import errors
from palimpsest.sqlmem.core import codec
from palimpsest.sqlmem.core.base import ExecResult, QueryResult
from palimpsest.sqlmem.core.limits import capped_rows, check_width
from palimpsest.sqlmem.sqlite.authorizer import (
    Authorizer,
    Mode,
    check_new_views,
    deadline,
    harden,
    install,
    result_width,
    trusted,
)
from palimpsest.sqlmem.sqlite.translate import Failure, translate
from palimpsest.workers import Refusal, serve

_OPEN_FILES = 64  # files a worker keeps a connection to; the least recently used close
_BUSY_TIMEOUT_S = 5.0
_SETUP = ("PRAGMA trusted_schema=OFF", "PRAGMA foreign_keys=ON", "PRAGMA auto_vacuum=FULL")


@dataclass(frozen=True, slots=True)
class Limits:
    max_rows: int
    timeout_ms: int
    max_bytes: int
    max_value_bytes: int
    max_result_bytes: int
    max_columns: int


@dataclass(frozen=True, slots=True)
class Query:
    path: str
    sql: str  # accepted by the validator
    params: codec.Params


@dataclass(frozen=True, slots=True)
class Batch:
    path: str
    work: list[tuple[str, bool, codec.Params]]  # (accepted sql, is an insert, params)


@dataclass(frozen=True, slots=True)
class Forget:
    """Close the connection to a file about to be erased (it is never used again)."""

    path: str


Request = Query | Batch | Forget


class Runner:
    """Runs requests on this process's connections, one at a time."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._conns: OrderedDict[str, sqlite3.Connection] = OrderedDict()

    def handle(self, request: Request, channel: Connection) -> tuple[str, Any]:
        try:
            if isinstance(request, Query):
                return "ok", self.query(request)
            if isinstance(request, Batch):
                return "ok", self.batch(request, channel)
            self.forget(request.path)
            return "ok", None
        except errors.PalimpsestError as e:
            return "error", Refusal(type(e).__name__, e.message, e.details)
        except Exception as e:
            # A bug: its type crosses back, never its text (which may hold values).
            failure = {"driverCode": type(e).__name__}
            return "error", Refusal("DatabaseFailure", "the SQL worker failed", failure)

    def query(self, request: Query) -> QueryResult:
        started = time.monotonic()
        with self._connection(request.path, create=False) as conn:
            guard = install(conn, Mode.READ)
            cursor = None
            try:
                with deadline(conn, self.limits.timeout_ms):
                    self._check_width(result_width(conn, request.sql, request.params))
                    cursor = conn.execute(request.sql, request.params)
                    columns = [d[0] for d in cursor.description or ()]
                    self._check_width(len(columns))  # the schema may have changed meanwhile
                    rows, truncated_by = capped_rows(
                        cursor, self.limits.max_rows, self.limits.max_result_bytes
                    )
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

    def batch(self, request: Batch, channel: Connection) -> list[ExecResult]:
        with self._connection(request.path, create=True) as conn:
            guard = install(conn, Mode.WRITE)
            with trusted(conn, guard):
                conn.execute("BEGIN IMMEDIATE")
                before = self._size(conn)
            started = time.monotonic()
            results: list[ExecResult] = []
            try:
                with deadline(conn, self.limits.timeout_ms):
                    for i, (sql, insert, params) in enumerate(request.work):
                        if i:
                            channel.send(("at", i))  # so a kill can name the statement
                        cursor = conn.execute(sql, params)
                        rowid = cursor.lastrowid if insert else None
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

    def forget(self, path: str) -> None:
        conn = self._conns.pop(path, None)
        if conn is not None:
            conn.close()

    def close(self) -> None:
        while self._conns:
            self._conns.popitem()[1].close()

    # -- internals --------------------------------------------------------------------------

    def _check_width(self, width: int) -> None:
        check_width(width, self.limits.max_columns)

    def _failure(
        self, guard: Authorizer, started: float, statement: int = 0, before: int | None = None
    ) -> Failure:
        return Failure(
            denied=guard.denied,
            statement=statement,
            elapsed_ms=round((time.monotonic() - started) * 1000),
            timeout_ms=self.limits.timeout_ms,
            quota_bytes=self.limits.max_bytes,
            current_bytes=before,
            max_value_bytes=self.limits.max_value_bytes,
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
    def _connection(self, path: str, *, create: bool) -> Iterator[sqlite3.Connection]:
        """The connection to a scope's file; for a read of a file not yet created, an empty
        in-memory database with the same hardening (reads never create files)."""
        conn = self._conns.pop(path, None)
        if conn is None and not create and not Path(path).exists():
            memory = self._open(":memory:")
            try:
                yield memory
            finally:
                memory.close()
            return
        conn = conn or self._open(path)
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.close()
            else:
                self._conns[path] = conn  # most recently used last
                while len(self._conns) > _OPEN_FILES:
                    self._conns.popitem(last=False)[1].close()

    def _open(self, target: str) -> sqlite3.Connection:
        conn = sqlite3.connect(target, isolation_level=None, timeout=_BUSY_TIMEOUT_S)
        try:
            harden(conn, self.limits.max_value_bytes)
            for pragma in _SETUP:
                conn.execute(pragma)
            conn.execute("PRAGMA journal_mode=WAL").fetchall()
            if self.limits.max_bytes:
                page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
                pages = max(1, self.limits.max_bytes // page_size)
                conn.execute(f"PRAGMA max_page_count={pages}").fetchall()
        except BaseException:
            conn.close()
            raise
        return conn


def main() -> None:
    # Ctrl-C reaches the whole process group; the API process decides when workers stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    channel = Connection(int(sys.argv[1]))
    runner: Runner | None = None
    try:
        runner = Runner(channel.recv())
        serve(channel, runner.handle)
    except (EOFError, OSError):
        return  # the API process is gone or closed the pool
    finally:
        if runner is not None:
            runner.close()
