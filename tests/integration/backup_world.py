"""A private managed deployment for the backup tests, and whole-database snapshots of it.

The private Neo4j has its own PALIMPSEST_HOME and free ports (the jars and the embedding
models are linked from the shared home, so nothing is downloaded); only the process its own
pid file names is ever stopped. The shared servers are never touched.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from neo4j import GraphDatabase

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.local import neo4j as neo4j_local
from palimpsest.server import serve_in_thread
from palimpsest_suites import faults
from palimpsest_suites.served import free_port

NODES = "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props"
RELATIONSHIPS = """
MATCH (a)-[r]->(b)
RETURN elementId(r) AS id, elementId(a) AS a, type(r) AS type, properties(r) AS props,
       elementId(b) AS b"""
INDEXES = "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, options"
CONSTRAINTS = "SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties"
NOTE = """mutation($k: String!, $v: JSON!) {
  memorySet(scope: USER, key: $k, value: $v, embed: true) { key } }"""
CREATE_TABLE = """mutation { sqlExec(scope: USER, statements: [
  {statement: "CREATE TABLE faults (batch TEXT, i INTEGER)"}]) { results { rowsAffected } } }"""


def private_settings(home: Path) -> Settings:
    return faults.fault_settings(home, free_port(), free_port())


def prepare(s: Settings) -> None:
    shared = Settings()
    faults.prepare_home(s, shared, lambda _: None)
    models = s.home / "models"
    if not models.exists() and shared.model_dir.exists():
        models.symlink_to(shared.model_dir, target_is_directory=True)


@contextmanager
def private_neo4j(home: Path) -> Iterator[Settings]:
    """A prepared deployment in ``home`` with its own Neo4j running, stopped and removed after."""
    s = private_settings(home)
    prepare(s)
    neo4j_local.start(s, lambda _: None)
    try:
        yield s
    finally:
        neo4j_local.stop(s, lambda _: None)
        shutil.rmtree(s.home, ignore_errors=True)


def env(s: Settings) -> dict[str, str]:
    """The environment of a `palimpsest` command acting on the private deployment."""
    return {
        **os.environ,
        **faults.api_env(s),
        "PALIMPSEST_NEO4J_HEAP": s.neo4j.heap,
        "PALIMPSEST_NEO4J_PAGECACHE": s.neo4j.pagecache,
    }


def command(*args: str) -> list[str]:
    return [sys.executable, "-c", "from palimpsest.cli import main; main()", *args]


def seed(s: Settings, tenant: str, user: str) -> None:
    """Every plane, through the real API: a note, documents, facts, a SQL table with rows."""
    token = mint(load_keys(s), tenant=tenant, user=user, agent="a", ttl_seconds=600)
    headers = {"Authorization": f"Bearer {token}"}
    with serve_in_thread(s) as url, httpx.Client(base_url=url, timeout=60) as http:

        def post(query: str, variables: dict[str, Any]) -> None:
            body = http.post(
                "/graphql", json={"query": query, "variables": variables}, headers=headers
            ).json()
            assert "errors" not in body, body

        post(NOTE, {"k": "prefs/editor", "v": {"tabs": 4, "theme": "dark"}})
        post(CREATE_TABLE, {})
        for kind in ("import", "facts", "sql"):
            post(*faults.batch_variables(kind, f"b{kind}"))


def graph(s: Settings) -> dict[str, Any]:
    """Every node and relationship with its labels, type and properties; indexes, constraints."""
    with GraphDatabase.driver(s.bolt_uri, auth=neo4j_local.credentials(s)) as driver:

        def rows(query: str) -> list[str]:
            records, _, _ = driver.execute_query(query)
            return sorted(json.dumps(r.data(), sort_keys=True, default=str) for r in records)

        return {q: rows(q) for q in (NODES, RELATIONSHIPS, INDEXES, CONSTRAINTS)}


def sql_files(s: Settings) -> dict[str, list[str]]:
    """Every SQLite database as its SQL dump, every owner record as its text."""
    root = s.home / "sql"
    found: dict[str, list[str]] = {}
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if path.suffix == ".db":
            with _sqlite(path) as conn:
                found[path.name] = list(conn.iterdump())
        elif path.suffix == ".json":
            found[path.name] = [path.read_text()]
    return found


def world(s: Settings) -> dict[str, Any]:
    return {"graph": graph(s), "sql": sql_files(s)}


@contextmanager
def _sqlite(path: Path) -> Iterator[sqlite3.Connection]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        yield conn
    finally:
        conn.close()


def pg_tables(s: Settings) -> dict[str, list[str]]:
    """Every SQL Memory table's rows, and every relation's owner and grants, on PostgreSQL.

    ``sqlmem_admin.hardening`` is left out: a restore clears it on purpose, so the store
    applies the database-wide hardening again (database grants are not in a dump).
    """
    import psycopg
    from psycopg import sql

    from palimpsest.local import postgres as postgres_local

    found: dict[str, list[str]] = {}
    with psycopg.connect(**postgres_local.conninfo(s)) as conn:  # type: ignore[arg-type]
        tables = conn.execute(
            "SELECT table_schema, table_name FROM information_schema.tables "
            "WHERE table_schema LIKE 'sqlmem\\_%' AND table_name <> 'hardening' ORDER BY 1, 2"
        ).fetchall()
        for schema, name in tables:
            query = sql.SQL("SELECT row_to_json(t)::text FROM {}.{} t").format(
                sql.Identifier(schema), sql.Identifier(name)
            )
            found[f"{schema}.{name}"] = sorted(str(r[0]) for r in conn.execute(query))
        grants = conn.execute(
            # A NULL ACL is the default one (pg_dump writes no grant that equals it).
            "SELECT n.nspname, c.relname, pg_get_userbyid(c.relowner), coalesce(c.relacl, "
            "acldefault(CASE WHEN c.relkind = 'S' THEN 's' ELSE 'r' END::\"char\", c.relowner))"
            "::text "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname LIKE 'sqlmem\\_%' ORDER BY 1, 2"
        ).fetchall()
        found["grants"] = [json.dumps(list(r)) for r in grants]
    return found


def sql_rows(s: Settings, tenant: str, user: str) -> Any:
    """``SELECT count(*) FROM faults`` through the API, as the scope's owner."""
    query = (
        'query { sqlQuery(scope: USER, statement: "SELECT count(*) AS n FROM faults") { rows } }'
    )
    return sql_post(s, tenant, user, query)


def sql_post(s: Settings, tenant: str, user: str, query: str) -> Any:
    """One GraphQL request through a served API, as the scope's owner."""
    token = mint(load_keys(s), tenant=tenant, user=user, agent="a", ttl_seconds=600)
    with serve_in_thread(s) as url, httpx.Client(base_url=url, timeout=60) as http:
        return http.post(
            "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {token}"}
        ).json()
