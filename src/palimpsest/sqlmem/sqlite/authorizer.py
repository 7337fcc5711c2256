"""Defence layer 2: what the SQLite connection itself refuses, whatever the validator passed.

The authorizer is an allow-list of action codes per mode (a query may only read) and of
function names; it also refuses any database but ``main`` (no ATTACH, no ``temp``). SQLite asks
the authorizer only while preparing a statement, so the mode is switched by installing a new
callback: ``set_authorizer`` expires every prepared statement, and a statement cached under
another mode (or under the store's own trusted statements) is prepared and checked again.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from typing import Any

# Core scalar, aggregate, window, date/time, JSON and math functions of SQLite. Absent on
# purpose: load_extension, readfile, writefile, edit, fts3_tokenizer, sqlite_* introspection.
ALLOWED_FUNCTIONS = frozenset(
    {
        # scalar
        "abs", "changes", "char", "coalesce", "concat", "concat_ws", "format", "glob", "hex",
        "ifnull", "iif", "instr", "last_insert_rowid", "length", "like", "likelihood", "likely",
        "lower", "ltrim", "max", "min", "nullif", "octet_length", "printf", "quote", "random",
        "randomblob", "replace", "round", "rtrim", "sign", "soundex", "substr", "substring",
        "total_changes", "trim", "typeof", "unhex", "unicode", "unlikely", "upper", "zeroblob",
        # aggregate and window
        "avg", "count", "group_concat", "string_agg", "sum", "total", "row_number", "rank",
        "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "first_value",
        "last_value", "nth_value",
        # date and time
        "date", "time", "datetime", "julianday", "unixepoch", "strftime", "timediff",
        # JSON
        "json", "jsonb", "json_array", "jsonb_array", "json_array_length", "json_error_position",
        "json_extract", "jsonb_extract", "json_insert", "jsonb_insert", "json_object",
        "jsonb_object", "json_patch", "jsonb_patch", "json_pretty", "json_remove", "jsonb_remove",
        "json_replace", "jsonb_replace", "json_set", "jsonb_set", "json_type", "json_valid",
        "json_quote", "json_group_array", "jsonb_group_array", "json_group_object",
        "jsonb_group_object", "json_each", "json_tree",
        # math
        "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "ceil", "ceiling", "cos",
        "cosh", "degrees", "exp", "floor", "ln", "log", "log10", "log2", "mod", "pi", "pow",
        "power", "radians", "sin", "sinh", "sqrt", "tan", "tanh", "trunc",
    }
)  # fmt: skip

# Eponymous virtual tables that read the connection or the file rather than the data: every
# PRAGMA as a table-valued function (pragma_table_info...), and the introspection tables of this
# build (dbstat, sqlite_stmt, sqlite_dbpage).
_INTROSPECTION_PREFIX = "pragma_"
_INTROSPECTION_TABLES = frozenset({"dbstat", "sqlite_stmt", "sqlite_dbpage"})


def introspection(name: str) -> bool:
    """True for a PRAGMA function or an introspection table, in any spelling."""
    low = name.lower()
    return low.startswith(_INTROSPECTION_PREFIX) or low in _INTROSPECTION_TABLES


# SQLite's internal helpers that ALTER TABLE runs while it is prepared. Agent SQL cannot call
# them (they are internal-only: "no such function"), so allowing them in write mode is safe.
_ALTER_INTERNALS = frozenset(
    {
        "sqlite_rename_table",
        "sqlite_rename_test",
        "sqlite_rename_column",
        "sqlite_rename_quotefix",
        "sqlite_drop_column",
    }
)

_READ_ACTIONS = frozenset(
    {sqlite3.SQLITE_READ, sqlite3.SQLITE_SELECT, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)
_WRITE_ACTIONS = _READ_ACTIONS | {
    sqlite3.SQLITE_CREATE_TABLE,
    sqlite3.SQLITE_CREATE_INDEX,
    sqlite3.SQLITE_CREATE_VIEW,
    sqlite3.SQLITE_DROP_TABLE,
    sqlite3.SQLITE_DROP_INDEX,
    sqlite3.SQLITE_DROP_VIEW,
    sqlite3.SQLITE_ALTER_TABLE,
    sqlite3.SQLITE_INSERT,
    sqlite3.SQLITE_UPDATE,
    sqlite3.SQLITE_DELETE,
    sqlite3.SQLITE_REINDEX,  # CREATE INDEX reindexes the new index; only the own file
}
# Checks SQLite makes for its own bookkeeping, allowed in every mode: ALTER TABLE reads and
# rewrites the temp schema (which holds nothing: temp objects are denied), and a table-valued
# function such as json_each declares its schema as an UPDATE of sqlite_master. Agent SQL
# cannot write sqlite_master itself ("may not be modified") without PRAGMA writable_schema,
# which is denied.
_SCHEMA_BOOKKEEPING = frozenset(
    {
        (sqlite3.SQLITE_READ, "sqlite_temp_master", "temp"),
        (sqlite3.SQLITE_UPDATE, "sqlite_temp_master", "temp"),
        (sqlite3.SQLITE_UPDATE, "sqlite_master", "main"),
    }
)
# Names of refused action codes, so a denial can say what was refused.
_ACTION_NAMES = {
    getattr(sqlite3, n): n.removeprefix("SQLITE_")
    for n in dir(sqlite3)
    if n.startswith("SQLITE_") and n.isupper() and not n.startswith(("SQLITE_LIMIT", "SQLITE_DB"))
}

# The largest string, blob or row SQLite may build (SQLITE_LIMIT_LENGTH): zeroblob(n),
# randomblob(n), printf('%.*c'), replace() and group_concat() fail inside SQLite beyond it, before
# any copy reaches Python. Stored rows are bounded by it too.
DEFAULT_MAX_VALUE_BYTES = 1024 * 1024
# Connection limits (sqlite3_limit). ATTACHED 0 makes any ATTACH fail even without the
# authorizer; the others bound memory a single statement can ask for. COLUMN stays at SQLite's
# default: a database whose schema has a table wider than the limit could not be opened at all,
# so result width is capped by the store (see ``result_width``).
LIMITS = {
    sqlite3.SQLITE_LIMIT_ATTACHED: 0,
    sqlite3.SQLITE_LIMIT_SQL_LENGTH: 1024 * 1024,
    sqlite3.SQLITE_LIMIT_COLUMN: 2000,
    sqlite3.SQLITE_LIMIT_EXPR_DEPTH: 500,
    sqlite3.SQLITE_LIMIT_COMPOUND_SELECT: 100,
    sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER: 1000,
    sqlite3.SQLITE_LIMIT_FUNCTION_ARG: 100,
    sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH: 10_000,
}
# VM instructions between progress-handler calls: often enough to stop within milliseconds.
PROGRESS_STEPS = 1000


class Mode(StrEnum):
    READ = "read"
    WRITE = "write"


class Authorizer:
    """The ``set_authorizer`` callback for agent statements in one mode."""

    def __init__(self, mode: Mode) -> None:
        self.mode = mode
        self.allowed = _READ_ACTIONS if mode is Mode.READ else _WRITE_ACTIONS
        self.functions = ALLOWED_FUNCTIONS | (_ALTER_INTERNALS if mode is Mode.WRITE else set())
        self.denied: str | None = None  # what the last denial was, for the error message
        # Views created since the last ``check_new_views``: SQLite compiles a view's body only
        # when it is read, so the body is checked by reading it once (``check_new_views``).
        self.created_views: list[str] = []

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, _src: str | None
    ) -> int:
        if (action, arg1, db) in _SCHEMA_BOOKKEEPING:
            return sqlite3.SQLITE_OK
        if action not in self.allowed:
            return self._deny(_ACTION_NAMES.get(action, str(action)))
        if db is not None and db != "main":
            return self._deny(f"database {db}")
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() not in self.functions:
            return self._deny(f"function {(arg2 or '').lower()}()")
        if action == sqlite3.SQLITE_READ and arg1 is not None and introspection(arg1):
            # arg1 is a table SQLite found, so the name is its own, not caller text.
            return self._deny(f"table {arg1.lower()}")
        if action == sqlite3.SQLITE_CREATE_VIEW and arg1 is not None:
            self.created_views.append(arg1)
        return sqlite3.SQLITE_OK

    def _deny(self, what: str) -> int:
        self.denied = what
        return sqlite3.SQLITE_DENY


def harden(conn: sqlite3.Connection, max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES) -> None:
    """Apply the connection limits (call once, before any agent statement)."""
    for limit, value in LIMITS.items():
        conn.setlimit(limit, value)
    conn.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, max_value_bytes)


def check_new_views(conn: sqlite3.Connection, guard: Authorizer) -> None:
    """Read every view created since the last call once (no rows), under ``guard``.

    SQLite accepts ``CREATE VIEW v AS SELECT * FROM pragma_database_list`` without looking at
    the body; preparing a read of ``v`` does, so a body the authorizer (or
    ``trusted_schema=OFF``) would refuse fails the creating statement here, and the caller rolls
    back. Any error counts, on purpose: a view must compile when it is made (so a view over a
    table that does not exist yet is refused too), otherwise one failure could mask another.
    """
    views, guard.created_views = guard.created_views, []
    for name in views:
        # An identifier quoted the SQLite way, read under the guard like any agent statement.
        quoted = name.replace('"', '""')
        conn.execute(f'SELECT * FROM main."{quoted}" LIMIT 0').close()  # noqa: S608


def result_width(conn: sqlite3.Connection, sql: str, params: Any) -> int:
    """How many columns ``sql`` returns, found by compiling it without running it.

    Python's ``execute`` already computes the first row, and a row of 2,000 columns of
    ``randomblob`` is gigabytes; ``EXPLAIN`` compiles the same text (the authorizer sees the
    same actions) and every result row leaves through a ``ResultRow`` opcode whose p2 is its
    width.
    """
    width = 0
    for row in conn.execute(f"EXPLAIN {sql}", params):
        if row[1] == "ResultRow":
            width = max(width, int(row[3]))
    return width


def install(conn: sqlite3.Connection, mode: Mode) -> Authorizer:
    """Install a fresh authorizer; this also expires every statement prepared before."""
    guard = Authorizer(mode)
    conn.set_authorizer(guard)
    return guard


@contextmanager
def trusted(conn: sqlite3.Connection, guard: Authorizer) -> Iterator[None]:
    """Run the store's own statements (BEGIN, COMMIT, size pragmas) without the authorizer.

    Re-installing the guard afterwards expires what was prepared meanwhile, so agent text equal
    to a trusted statement is never served from the statement cache unchecked.
    """
    conn.set_authorizer(None)
    try:
        yield
    finally:
        conn.set_authorizer(guard)


@contextmanager
def deadline(conn: sqlite3.Connection, timeout_ms: int) -> Iterator[None]:
    """Interrupt any statement still running ``timeout_ms`` after entry (0 = no limit)."""
    if timeout_ms <= 0:
        yield
        return
    until = time.monotonic() + timeout_ms / 1000

    def expired() -> bool:
        return time.monotonic() > until

    conn.set_progress_handler(expired, PROGRESS_STEPS)
    try:
        yield
    finally:
        conn.set_progress_handler(None, 0)
