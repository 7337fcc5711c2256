"""Two API replicas (two apps on two ports) against the same Neo4j and PostgreSQL: every answer
is the same from either, and a write on one is read on the other, with the bookmark the write
returned passed along (cypher/driver/causal.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from palimpsest.config import Settings
from palimpsest.cypher.driver.causal import HEADER
from palimpsest.server import serve_in_thread

Call = Callable[..., httpx.Response]

WRITES: list[tuple[str, dict[str, Any]]] = [
    (
        'mutation($v: JSON!) { memorySet(scope: USER, key: "prefs/editor", value: $v,'
        " embed: true) { key } }",
        {"v": {"tabs": 4}},
    ),
    (
        'mutation($m: String!) { importDocument(scope: USER, markdown: $m, path: "/ops/run")'
        " { summary { id } } }",
        {"m": "# Runbook\n\nRestart the checkout service with care.\n"},
    ),
    (
        "mutation($f: [FactInput!]!) { assertFacts(scope: USER, facts: $f, place: false)"
        " { fact { id } } }",
        {
            "f": [
                {
                    "subject": {"type": "service", "name": "checkout"},
                    "predicate": "owned by",
                    "objectValue": "payments",
                }
            ]
        },
    ),
    (
        "mutation($s: [SqlStatementInput!]!) { sqlExec(scope: USER, statements: $s)"
        " { results { rowsAffected } } }",
        {
            "s": [
                {"statement": "CREATE TABLE notes (id SERIAL PRIMARY KEY, body TEXT)"},
                {"statement": "INSERT INTO notes (body) VALUES (?)", "args": ["written on A"]},
            ]
        },
    ),
]
READS = [
    '{ memory(scope: USER, key: "prefs/editor") { value } }',
    '{ memories(scope: USER, prefix: "prefs/") { items { key value } } }',
    '{ documents(scope: USER, pathPrefix: "/ops/") { items { path } } }',
    '{ facts(scope: USER, subject: {type: "service", name: "checkout"}) { items { text } } }',
    '{ sqlQuery(scope: USER, statement: "SELECT body FROM notes ORDER BY id") { rows } }',
    '{ recall(scope: USER, query: "restart the checkout service", topK: 5, '
    "sources: [DOCUMENTS, NOTES, FACTS]) { hits { kind text } } }",
]


@pytest.fixture(scope="module")
def replicas(postgres_settings: Settings) -> Iterator[tuple[httpx.Client, httpx.Client]]:
    with (
        serve_in_thread(postgres_settings) as a_url,
        serve_in_thread(postgres_settings) as b_url,
        httpx.Client(base_url=a_url, timeout=30) as a,
        httpx.Client(base_url=b_url, timeout=30) as b,
    ):
        assert a_url != b_url
        yield a, b


def call(
    client: httpx.Client, token: str, query: str, bookmark: str | None = None, **variables: Any
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"}
    if bookmark is not None:
        headers[HEADER] = bookmark
    return client.post("/graphql", json={"query": query, "variables": variables}, headers=headers)


def test_a_write_on_one_replica_is_read_on_the_other_and_every_answer_is_the_same(
    replicas: tuple[httpx.Client, httpx.Client], token: Callable[..., str], tenant: str
) -> None:
    a, b = replicas
    alice = token(tenant, "replica-alice", "planner")
    bookmark: str | None = None
    for query, variables in WRITES:
        response = call(a, alice, query, bookmark, **variables)
        assert "errors" not in response.json(), response.json()
        bookmark = response.headers.get(HEADER)
        assert bookmark, "a write returns the bookmark of its transaction"
    on_b = [call(b, alice, query, bookmark).json() for query in READS]
    on_a = [call(a, alice, query, bookmark).json() for query in READS]
    assert all("errors" not in body for body in on_b), on_b
    assert on_b == on_a
    memory, memories, documents, facts, sql, recall = (body["data"] for body in on_b)
    assert memory["memory"]["value"] == {"tabs": 4}
    assert [e["key"] for e in memories["memories"]["items"]] == ["prefs/editor"]
    assert documents["documents"]["items"] == [{"path": "/ops/run"}]
    assert [f["text"] for f in facts["facts"]["items"]] == ["checkout owned by payments"]
    assert sql["sqlQuery"]["rows"] == [["written on A"]]
    assert "Restart the checkout service with care.\n" in [
        h["text"] for h in recall["recall"]["hits"]
    ]


def test_bookmarks_reach_the_database_and_bad_ones_are_refused(
    replicas: tuple[httpx.Client, httpx.Client], token: Callable[..., str], tenant: str
) -> None:
    a, b = replicas
    bob = token(tenant, "replica-bob", "planner")
    write = 'mutation { memorySet(scope: USER, key: "k", value: 1) { key } }'
    response = call(a, bob, write)
    first = response.headers[HEADER]
    # a later transaction on the other replica, started after the first, supersedes it
    response = call(
        b, bob, 'mutation { memorySet(scope: USER, key: "k", value: 2) { key } }', first
    )
    second = response.headers[HEADER]
    assert second != first
    read = 'query { memory(scope: USER, key: "k") { value } }'
    assert call(a, bob, read, second).json()["data"]["memory"]["value"] == 2
    # not sealed by this service for this caller: refused before anything runs, alike
    raw = "FB:kcwQAAAAAAAAAAAAAAAAAAAAAAAAAAAAkA"
    for bad in ("not a bookmark!", raw, "b1." + "x" * 600, first + "x"):
        refused = call(a, bob, read, bad)
        assert refused.status_code == 400
        assert refused.json()["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    # the seal is the replicas' shared key: a bookmark from A opens on B, for its caller only
    assert call(b, bob, read, first).json()["data"]["memory"]["value"] == 2
    carol = token(tenant, "replica-carol", "planner")
    assert call(b, carol, read, first).status_code == 400
