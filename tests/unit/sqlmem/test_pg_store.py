"""PostgreSQL store specifics: several stores (as several API replicas) on one database."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from palimpsest.sqlmem import Statement
from palimpsest.sqlmem.pg_store import PostgresStore
from tests.unit.sqlmem.conftest import Scopes

pytestmark = pytest.mark.postgres


def replica(pg_conninfo: dict[str, Any]) -> PostgresStore:
    store = PostgresStore(
        pg_conninfo,
        max_rows=10,
        timeout_ms=20_000,
        max_bytes=0,
        max_value_bytes=1024,
        max_result_bytes=1024 * 1024,
        max_columns=10,
    )
    store.prepare()
    return store


def test_replicas_provision_many_new_scopes_at_once(
    pg_conninfo: dict[str, Any], scopes: Scopes
) -> None:
    """First writes of different scopes on two replicas at the same moment all succeed (each
    grants its role CONNECT on the one database row: they must take turns)."""
    stores = [replica(pg_conninfo), replica(pg_conninfo)]
    owners = [scopes(f"u{i}") for i in range(12)]
    try:

        def first_write(i: int) -> list[list[Any]]:
            store, who = stores[i % 2], owners[i]
            store.execute_sync(
                who,
                [
                    Statement("CREATE TABLE t (a INTEGER)"),
                    Statement("INSERT INTO t VALUES (?)", [i]),
                ],
            )
            return stores[(i + 1) % 2].query_sync(who, "SELECT a FROM t", None).rows

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(first_write, range(12)))
        assert answers == [[[i]] for i in range(12)]
    finally:
        for store in stores:
            store.close()
