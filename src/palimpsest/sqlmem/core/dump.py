"""One scope's SQLite database as records, and back: for export and import.

A dump is the schema (tables first, then indexes and views) and every row of every table,
values in the API's JSON form (blobs as ``{"$base64": ...}``). Loading runs the same
statements through the validating store, so a dump can only create what ``sqlExec`` could.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from palimpsest.sqlmem.core import codec
from palimpsest.sqlmem.core.base import SqlStatement

Record = dict[str, Any]
BATCH = 100  # statements per sqlExec-sized transaction when loading


def dump(path: Path) -> list[Record]:
    """Read a database file (read-only, one snapshot); empty when there is none."""
    if not path.exists():
        return []
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    try:
        conn.execute("BEGIN")
        objects = conn.execute(
            "SELECT type, name, sql FROM sqlite_master "
            "WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        ).fetchall()
        tables = [(n, sql) for t, n, sql in objects if t == "table"]
        records: list[Record] = [
            {"kind": "sql_schema", "type": "table", "name": n, "sql": sql} for n, sql in tables
        ]
        for name, _ in tables:
            records += _rows(conn, name)
        records += [
            {"kind": "sql_schema", "type": t, "name": n, "sql": sql}
            for t, n, sql in objects
            if t != "table"
        ]
        conn.execute("COMMIT")
        return records
    finally:
        conn.close()


def load_statements(records: list[Record]) -> Iterator[list[SqlStatement]]:
    """The statements that rebuild a dump, in batches the store runs one by one."""
    batch: list[SqlStatement] = []
    for r in records:
        if r["kind"] == "sql_schema":
            batch.append(SqlStatement(r["sql"]))
        else:
            columns = ", ".join(_quote(c) for c in r["columns"])
            marks = ", ".join("?" for _ in r["columns"])
            # Quoted identifiers from the dump; the store validates the statement anyway.
            sql = f"INSERT INTO {_quote(r['table'])} ({columns}) VALUES ({marks})"  # noqa: S608
            batch.append(SqlStatement(sql, list(r["values"])))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _rows(conn: sqlite3.Connection, table: str) -> list[Record]:
    cursor = conn.execute(f"SELECT * FROM {_quote(table)}")  # noqa: S608 - a quoted identifier
    columns = [d[0] for d in cursor.description or ()]
    return [
        {
            "kind": "sql_row",
            "table": table,
            "columns": columns,
            "values": [codec.to_json(v) for v in row],
        }
        for row in cursor
    ]


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'
