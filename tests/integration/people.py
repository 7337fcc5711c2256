"""People with data in every plane, and whole-database views of what is left of them.

Every string a planted person writes carries their marker word, and their user id contains
it too, so "nothing of them remains" can be checked over every property of every node and
relationship in the database, not through the API alone.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from tests.integration.answers import ok
from tests.integration.conftest import Gql

ALL = [Scope.AGENT, Scope.USER, Scope.TENANT]
ONTOLOGY = "# Tenant ontology\nstatus: confirmed\n\n## service\nscope: tenant\n"

IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  summary { id } chunks { id text } } }"""
ASSERT = """mutation($facts: [FactInput!]!, $scope: Scope!, $place: Boolean!) {
  assertFacts(scope: $scope, facts: $facts, place: $place) { fact { id scope } } }"""
SET = """mutation($k: String!, $v: JSON!, $scope: Scope! = USER, $embed: Boolean! = false) {
  memorySet(scope: $scope, key: $k, value: $v, embed: $embed) { key } }"""
SQL = """mutation($s: [SqlStatementInput!]!) { sqlExec(scope: USER, statements: $s) {
  results { rowsAffected } } }"""

# Read-only views over the whole database, run by the test's own driver.
ROWS_OF_KEY = """
CALL () { MATCH (n) WHERE n.scope_key = $key OR n.origin_key = $key OR n.writer_key = $key
          OR n.active_key = $key RETURN count(n) AS c
  UNION ALL MATCH ()-[r]->() WHERE r.scope_key = $key OR r.writer_key = $key
          RETURN count(r) AS c }
RETURN sum(c) AS n
"""
# Every string property of every relationship, and of every node of the tenant, of GLOBAL
# and without a tenant (other tenants' nodes are skipped only to keep the suite quick; the
# erase benchmark scans every node).
# A string property holding the marker, or a name in the lists of names rows keep (an
# entity's aliases, a merge's added aliases). Named, not every list: type-checking every
# embedding vector of the database would take minutes.
_HOLDS = """(any(k IN keys({v}) WHERE {v}[k] IS :: STRING AND {v}[k] CONTAINS $m)
           OR any(x IN coalesce({v}.aliases, []) + coalesce({v}.alias_norms, [])
                       + coalesce({v}.alias_keys, []) + coalesce({v}.added_aliases, [])
                  WHERE x CONTAINS $m))"""
ROWS_WITH_MARKER = (
    """
CALL () { MATCH (n) WHERE (n.tenant_id IS NULL OR n.tenant_id IN [$tenant, ''])
            AND """
    + _HOLDS.format(v="n")
    + """
          RETURN count(n) AS c
  UNION ALL MATCH ()-[r]->() WHERE """
    + _HOLDS.format(v="r")
    + """
          RETURN count(r) AS c }
RETURN sum(c) AS n
"""
)
SCOPE_ROWS = """
CALL () { MATCH (n) WHERE n.scope_key IN $keys
          RETURN labels(n) AS kind, properties(n) AS props
  UNION ALL MATCH ()-[r]->() WHERE r.scope_key IN $keys
          RETURN [type(r)] AS kind, properties(r) AS props }
RETURN kind, props
"""
COUNT_BY_LABEL = """
MATCH (n) WHERE n.scope_key = $key
RETURN labels(n)[0] AS label, count(n) AS n,
       sum(CASE WHEN n:Chunk AND n.index IS NULL THEN 1 ELSE 0 END) AS roots
"""
TENANT_FACTS = """
MATCH ()-[f:FACT {scope_key: $key}]->() RETURN count(f) AS facts
"""
TENANT_ENTITIES = "MATCH (e:Entity {scope_key: $key}) RETURN count(e) AS n"
PLANT_SPANS = """
UNWIND $statuses AS status
CREATE (:PendingSpan {id: randomUUID(), scope_key: $key, tenant_id: $tenant, scope: 'USER',
                      owner_id: $user, status: status, text: $text})
"""


@dataclass
class Person:
    tenant: str
    user: str
    marker: str
    token: str

    @property
    def key(self) -> str:
        return scope_key(self.tenant, Scope.USER, self.user)

    @property
    def tenant_key(self) -> str:
        return scope_key(self.tenant, Scope.TENANT, self.tenant)

    def sql_files(self, settings: Settings) -> list[Path]:
        base = settings.home / "sql" / self.key
        return [Path(f"{base}.db{s}") for s in ("", "-wal", "-shm")] + [Path(f"{base}.json")]


def new_org(gql: Gql, token: Callable[..., str], prefix: str) -> tuple[str, str]:
    tenant = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = token(tenant, "root", None, admin=True)
    ok(gql("mutation($m: String!) { setOntology(markdown: $m) { status } }", admin, m=ONTOLOGY))
    return tenant, admin


def plant(gql: Gql, token: Callable[..., str], driver: Driver, tenant: str, name: str) -> Person:
    """A person with data in every plane: entries, documents, facts with one and two sources
    and none, facts placed in the tenant from their chunks, a SQL database, pending spans."""
    marker = f"zq{uuid.uuid4().hex[:10]}9"  # a digit last: stemming leaves the term whole
    user = f"{name}-{marker}"
    who = token(tenant, user, "planner", memory_scopes=ALL, sql_scopes=ALL)
    p = Person(tenant, user, marker, who)
    ok(gql(SET, who, k=f"prefs/{marker}", v={"note": f"likes {marker} tea"}))
    ok(gql(SET, who, k=f"notes/{marker}", v=f"{marker} remembers the ledger", embed=True))
    ok(gql(SET, who, k="plain", v=[1, 2, marker]))
    chunks = []
    for i in range(2):
        text = (
            f"# {marker} notes {i}\n\nThe ledger-{marker} runs on {marker}-cluster.\n\n- item {i}\n"
        )
        chunks.append(ok(gql(IMPORT, who, m=text))["importDocument"]["chunks"][1]["id"])
    own = {"type": "person", "name": f"{marker} friend"}
    assert_facts(
        gql,
        who,
        Scope.USER,
        False,
        [
            {**fact(own, "knows", marker), "source": span(chunks[0])},
            {**fact(own, "knows", marker), "source": span(chunks[1])},
            fact(own, "met", f"{marker} in 2020"),
        ],
    )
    # Placed in the tenant from this person's chunk, written there without a source, and a
    # fact the tenant shares with whoever else attests it (see attest_shared).
    service = {"type": "service", "name": f"ledger-{marker}"}
    assert_facts(
        gql,
        who,
        Scope.USER,
        True,
        [{**fact(service, "runs on", marker), "source": span(chunks[0])}],
    )
    assert_facts(gql, who, Scope.TENANT, False, [fact(service, "owned by", marker)])
    ok(
        gql(
            SQL,
            who,
            s=[
                {"statement": "CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, raw BLOB)"},
                {
                    "statement": "INSERT INTO notes (body, raw) VALUES (?, ?), (?, ?)",
                    "args": [f"{marker} one", {"$base64": "AAEC"}, f"{marker} two", None],
                },
            ],
        )
    )
    driver.execute_query(
        PLANT_SPANS,
        key=p.key,
        tenant=tenant,
        user=user,
        statuses=["queued", "dead"],
        text=f"{marker} said something",
    )
    return p


def attest_shared(gql: Gql, people: list[Person], name: str) -> str:
    """Each person attests the same tenant fact from a chunk of their own."""
    fact_id = ""
    for p in people:
        chunk = ok(gql(IMPORT, p.token, m=f"# shared\n\nThe {name} runs on rails.\n"))
        chunk_id = chunk["importDocument"]["chunks"][1]["id"]
        service = {"type": "service", "name": name}
        item = {**fact(service, "runs on", "rails"), "source": span(chunk_id, 4, 4 + len(name))}
        fact_id = assert_facts(gql, p.token, Scope.USER, True, [item])[0]["id"]
    return fact_id


def fact(subject: dict[str, str], predicate: str, value: str) -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "objectValue": value}


def span(chunk: str, start: int = 4, end: int = 10) -> dict[str, Any]:
    return {"chunkId": chunk, "start": start, "end": end}


def assert_facts(
    gql: Gql, who: str, scope: Scope, place: bool, items: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    written = ok(gql(ASSERT, who, facts=items, scope=scope.value, place=place))["assertFacts"]
    return [w["fact"] for w in written]


def count(driver: Driver, query: str, **params: Any) -> int:
    records, _, _ = driver.execute_query(query, **params)
    return int(records[0][0] or 0)


def by_label(driver: Driver, key: str) -> dict[str, int]:
    records, _, _ = driver.execute_query(COUNT_BY_LABEL, key=key)
    found = {r["label"]: int(r["n"]) for r in records}
    roots = sum(int(r["roots"]) for r in records)
    if "Chunk" in found:
        found["Chunk"] -= roots
    found["FACT"] = count(
        driver, "MATCH ()-[f:FACT {scope_key: $key}]->() RETURN count(f)", key=key
    )
    return found


def fingerprint(gql: Gql, driver: Driver, people: list[Person]) -> str:
    """Every node and relationship of these people's scopes with every property, and every
    row of their SQL databases."""
    records, _, _ = driver.execute_query(SCOPE_ROWS, keys=[p.key for p in people])
    rows = sorted(repr((sorted(r["kind"]), sorted(r["props"].items()))) for r in records)
    for p in people:
        query = '{ sqlQuery(scope: USER, statement: "SELECT * FROM notes ORDER BY id") { rows } }'
        rows.append(repr(ok(gql(query, p.token))["sqlQuery"]["rows"]))
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()
