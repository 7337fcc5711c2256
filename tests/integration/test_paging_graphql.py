"""Every list that can grow pages the same way: items, an opaque cursor and hasMore.

Each list is walked with small pages and must return every row exactly once, in its
documented order; malformed cursors, cursors of another list and bad limits are refused;
a cursor carried into another scope reaches only that scope's own rows.
"""

from __future__ import annotations

import base64
import itertools
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from palimpsest.identity import Scope
from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql

MEMORIES = """query($after: String, $limit: Int! = 3, $prefix: String! = "") {
  memories(scope: USER, prefix: $prefix, limit: $limit, after: $after)
  { items { key } cursor hasMore } }"""
DOCUMENTS = """query($after: String, $limit: Int! = 2) {
  documents(scope: USER, limit: $limit, after: $after)
  { items { id path } cursor hasMore } }"""
FACTS = """query($after: String, $limit: Int! = 2) {
  facts(scope: USER, limit: $limit, after: $after, includeRetired: true)
  { items { id validAt createdAt } cursor hasMore } }"""
HISTORY = """query($id: ID!, $after: String, $limit: Int! = 2) {
  factHistory(scope: USER, id: $id, limit: $limit, after: $after)
  { items { id } cursor hasMore } }"""
ENTITIES = """query($after: String, $limit: Int! = 2) {
  entities(scope: USER, limit: $limit, after: $after)
  { items { id type name } cursor hasMore } }"""
DATABASES = """query($after: String, $limit: Int! = 1) {
  sqlDatabases(scope: TENANT, limit: $limit, after: $after)
  { items { id owner } cursor hasMore } }"""
LISTS = {
    "memories": MEMORIES,
    "documents": DOCUMENTS,
    "facts": FACTS,
    "entities": ENTITIES,
    "sqlDatabases": DATABASES,
}

SET = """mutation($k: String!) { memorySet(scope: USER, key: $k, value: 1) { key } }"""
IMPORT = """mutation($docs: [DocumentInput!]!) { importDocuments(scope: USER, documents: $docs)
  { summary { id } } }"""
ASSERT = """mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts,
  place: false) { fact { id subject { id } object { id } } } }"""
SUPERSEDE = """mutation($id: ID!, $by: ID!) { supersedeFact(scope: USER, id: $id, byId: $by)
  { already } }"""
EXEC = """mutation { sqlExec(scope: USER, statements: [{statement: "CREATE TABLE t (a)"}])
  { results { rowsAffected } } }"""


def walk(gql: Gql, who: str, query: str, **variables: Any) -> tuple[list[dict[str, Any]], int]:
    """Every item of a list, page by page, checking each page's cursor against hasMore."""
    items: list[dict[str, Any]] = []
    pages = 0
    after = None
    while True:
        [page] = ok(gql(query, who, after=after, **variables)).values()
        pages += 1
        items += page["items"]
        assert page["hasMore"] is (page["cursor"] is not None)
        if not page["hasMore"]:
            return items, pages
        assert page["items"], "a page that says more follows holds items"
        assert pages < 50, "the cursor does not advance"
        after = page["cursor"]


@pytest.fixture
def who(token: Callable[..., str], tenant: str) -> str:
    return token(tenant, f"pager-{uuid.uuid4().hex[:8]}", "pager")


def test_memories_page_through_every_key_once_in_key_order(gql: Gql, who: str) -> None:
    keys = ["b", "a/2", "a/10", "a/1", "é", "Z", "a/1/x"]
    for key in keys:
        ok(gql(SET, who, k=key))
    items, pages = walk(gql, who, MEMORIES)
    assert [i["key"] for i in items] == sorted(keys)  # code-point order, each key once
    assert pages == 3
    exact, pages = walk(gql, who, MEMORIES, limit=7)
    assert (exact, pages) == (items, 1)  # a full last page needs no further request
    within, _ = walk(gql, who, MEMORIES, prefix="a/1", limit=1)
    assert [i["key"] for i in within] == ["a/1", "a/1/x", "a/10"]


def test_documents_page_through_every_document_once_in_id_order(gql: Gql, who: str) -> None:
    docs = [{"markdown": f"# Doc {i}\n\nbody {i}\n", "path": f"/p/{i}"} for i in range(5)]
    ids = [d["summary"]["id"] for d in ok(gql(IMPORT, who, docs=docs))["importDocuments"]]
    items, pages = walk(gql, who, DOCUMENTS)
    assert [i["id"] for i in items] == sorted(ids)
    assert pages == 3


def fact(name: str, valid: str | None, predicate: str = "knows") -> dict[str, Any]:
    return {
        "subject": {"type": "person", "name": name},
        "predicate": predicate,
        "object": {"type": "person", "name": f"friend of {name}"},
        "validAt": valid,
    }


def test_facts_page_in_time_order_with_ties_and_undated_facts_last(gql: Gql, who: str) -> None:
    # One batch shares createdAt, so ties on (validAt, createdAt) fall back to the id.
    first = [fact("a", "2020"), fact("b", "2020"), fact("c", None), fact("d", "2019")]
    second = [fact("e", "2020"), fact("f", None), fact("g", "2021-06-01T10:00:00.5+02:00")]
    written = [
        a["fact"]["id"]
        for batch in (first, second)
        for a in ok(gql(ASSERT, who, facts=batch))["assertFacts"]
    ]
    items, pages = walk(gql, who, FACTS)
    assert sorted(i["id"] for i in items) == sorted(written)  # every fact exactly once
    assert pages == 4

    def order(f: dict[str, Any]) -> tuple[bool, str, str, str]:
        # Timestamps in one zone (UTC) with fixed precision sort as text.
        return (f["validAt"] is None, f["validAt"] or "", f["createdAt"], f["id"])

    assert items == sorted(items, key=order)
    assert [i["validAt"] is None for i in items] == [False] * 5 + [True] * 2
    whole, _ = walk(gql, who, FACTS, limit=1000)
    assert whole == items


def test_fact_history_pages_oldest_first(gql: Gql, who: str) -> None:
    batch = [fact("h", f"{2000 + i}", predicate="leads") for i in range(5)]
    ids = [a["fact"]["id"] for a in ok(gql(ASSERT, who, facts=batch))["assertFacts"]]
    for old, new in itertools.pairwise(ids):
        ok(gql(SUPERSEDE, who, id=old, by=new))
    items, pages = walk(gql, who, HISTORY, id=ids[2])
    assert [i["id"] for i in items] == ids
    assert pages == 3
    [page] = ok(gql(HISTORY, who, id=ids[0], limit=2)).values()
    other = ok(gql(ASSERT, who, facts=[fact("lone", None)]))["assertFacts"][0]["fact"]["id"]
    stray = gql(HISTORY, who, id=other, after=page["cursor"])
    assert code_of(stray) == "INVALID_ARGUMENT"  # a cursor from another fact's history


def test_entities_page_by_name_then_type(gql: Gql, who: str) -> None:
    same_name = [
        {
            "subject": {"type": t, "name": "Mercury"},
            "predicate": "is",
            "objectValue": f"a {t}",
        }
        for t in ("planet", "element", "god")
    ]
    ok(gql(ASSERT, who, facts=same_name))
    items, pages = walk(gql, who, ENTITIES)
    keyed = [(i["name"].casefold(), i["type"]) for i in items]
    assert keyed == sorted(keyed)
    assert len({i["id"] for i in items}) == len(items) == 6  # 3 subjects, 3 literal objects
    assert [i["type"] for i in items if i["name"] == "Mercury"] == ["element", "god", "planet"]
    assert pages == 3


def test_sql_databases_page_through_the_tenant_view(gql: Gql, token: Callable[..., str]) -> None:
    tenant = f"t-pages-{uuid.uuid4().hex[:8]}"
    for user in ("u1", "u2", "u3"):
        ok(gql(EXEC, token(tenant, user, "pager")))
    admin = token(tenant, "root", "ops", admin=True)
    items, pages = walk(gql, admin, DATABASES)
    assert sorted(i["owner"] for i in items) == ["u1", "u2", "u3"]
    assert [i["id"] for i in items] == sorted(i["id"] for i in items)
    assert pages == 3


def raw(body: str) -> str:
    return base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")


@pytest.mark.parametrize("name", sorted(LISTS))
def test_malformed_and_foreign_cursors_and_bad_limits_are_refused(
    gql: Gql, token: Callable[..., str], tenant: str, name: str
) -> None:
    admin = token(tenant, "cursor-admin", "pager", admin=True)
    ok(gql(SET, admin, k="k1"))
    ok(gql(SET, admin, k="k2"))
    [page] = ok(gql(MEMORIES, admin, limit=1)).values()
    memories_cursor = page["cursor"]
    assert memories_cursor is not None
    bad = [
        "not a cursor",
        "",
        raw("{}"),
        raw(json.dumps({"l": name, "p": []})),
        raw(json.dumps({"l": name, "p": [1, 2, 3, 4]})),
        "x" * 5000,
    ]
    if name != "memories":
        bad.append(memories_cursor)  # a real cursor, of another list
    for cursor in bad:
        refused = gql(LISTS[name], admin, after=cursor)
        assert code_of(refused) == "INVALID_ARGUMENT", (name, cursor[:40])
        assert refused["data"] is None
    for limit in (0, -1, 100_000):
        assert code_of(gql(LISTS[name], admin, limit=limit)) == "INVALID_ARGUMENT"


def test_a_cursor_carried_into_another_scope_reaches_only_that_scopes_rows(
    gql: Gql, token: Callable[..., str], tenant: str
) -> None:
    alice = token(tenant, "cursor-alice", "pager", memory_scopes=[Scope.USER])
    bob = token(tenant, "cursor-bob", "pager", memory_scopes=[Scope.USER])
    for key in ("s/1", "s/3", "s/5"):
        ok(gql(SET, alice, k=key))
    for key in ("s/2", "s/4"):
        ok(gql(SET, bob, k=key))
    [bobs] = ok(gql(MEMORIES, bob, limit=1)).values()
    assert [i["key"] for i in bobs["items"]] == ["s/2"]
    [seen] = ok(gql(MEMORIES, alice, after=bobs["cursor"], limit=10)).values()
    assert [i["key"] for i in seen["items"]] == ["s/3", "s/5"]  # alice's own, after s/2
    assert seen["hasMore"] is False
