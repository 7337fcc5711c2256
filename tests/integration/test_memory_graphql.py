"""The key/value plane end to end through GraphQL on the real Neo4j."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from palimpsest.identity import Scope
from tests.integration.answers import only_code_of
from tests.integration.conftest import Gql

SET = """
mutation($scope: Scope!, $key: String!, $value: JSON!, $ttl: Int, $embed: Boolean! = false) {
  memorySet(scope: $scope, key: $key, value: $value, ttlSeconds: $ttl, embed: $embed) {
    key value expiresAt embedded provenance { tenant run session agent origin }
  }
}"""
GET = "query($scope: Scope!, $key: String!) { memory(scope: $scope, key: $key) { value } }"
DELETE = "mutation($s: Scope!, $k: String!) { memoryDelete(scope: $s, key: $k) { deleted } }"


def value_of(gql: Gql, token: str, scope: str, key: str) -> Any:
    body = gql(GET, token, scope=scope, key=key)
    assert "errors" not in body, body
    entry = body["data"]["memory"]
    return None if entry is None else entry["value"]


@pytest.fixture
def people(token: Callable[..., str], tenant: str) -> dict[str, str]:
    """Two tenants, two users and two agents; AGENT is not a default grant, so it is listed."""
    grants = [Scope.AGENT, Scope.USER, Scope.TENANT]
    return {
        "alice_a1": token(tenant, "alice", "planner", memory_scopes=grants),
        "bob_a1": token(tenant, "bob", "planner", memory_scopes=grants),
        "alice_a2": token(tenant, "alice", "writer", memory_scopes=grants),
        "other_tenant": token(tenant + "-other", "alice", "planner", memory_scopes=grants),
        "admin": token(tenant, "root", "ops", admin=True),
        "other_admin": token(tenant + "-other", "root", "ops", admin=True),
        "listing_admin": token(
            tenant, "root", "ops", admin=True, memory_scopes=[Scope.USER, Scope.GLOBAL]
        ),
        "operator": token(tenant, "sre", "ops-bot", operator=True),
        "other_operator": token(tenant + "-other", "sre2", None, operator=True),
        "isolated_operator": token(tenant, "sre", "ops-bot", operator=True, isolated=True),
    }


def test_set_and_get_round_trip_with_server_stamped_provenance(
    gql: Gql, people: dict[str, str]
) -> None:
    body = gql(SET, people["alice_a1"], scope="USER", key="prefs/editor", value={"tabs": 4})
    entry = body["data"]["memorySet"]
    assert entry["value"] == {"tabs": 4}
    assert entry["expiresAt"] is None
    assert entry["provenance"]["origin"] == "AGENT"
    assert entry["provenance"]["agent"] == "planner"
    assert entry["provenance"]["run"].startswith("run_")
    assert value_of(gql, people["alice_a1"], "USER", "prefs/editor") == {"tabs": 4}


def test_user_scope_is_shared_across_agents_but_not_users(gql: Gql, people: dict[str, str]) -> None:
    gql(SET, people["alice_a1"], scope="USER", key="u/k", value="alice's")
    assert value_of(gql, people["alice_a2"], "USER", "u/k") == "alice's"
    assert value_of(gql, people["bob_a1"], "USER", "u/k") is None
    assert value_of(gql, people["other_tenant"], "USER", "u/k") is None


def test_agent_scope_is_shared_across_users_of_that_agent(gql: Gql, people: dict[str, str]) -> None:
    gql(SET, people["alice_a1"], scope="AGENT", key="a/k", value=1)
    assert value_of(gql, people["bob_a1"], "AGENT", "a/k") == 1
    assert value_of(gql, people["alice_a2"], "AGENT", "a/k") is None
    assert value_of(gql, people["other_tenant"], "AGENT", "a/k") is None


def test_tenant_scope_is_shared_inside_the_tenant_only(gql: Gql, people: dict[str, str]) -> None:
    gql(SET, people["alice_a1"], scope="TENANT", key="house/style", value="tabs")
    assert value_of(gql, people["bob_a1"], "TENANT", "house/style") == "tabs"
    assert value_of(gql, people["other_tenant"], "TENANT", "house/style") is None


PROVENANCE = """query($scope: Scope!, $key: String!) {
  memory(scope: $scope, key: $key) { value provenance { tenant session run agent model origin } }
}"""


def test_global_scope_is_operator_only_and_spans_tenants(
    gql: Gql, people: dict[str, str], tenant: str
) -> None:
    """Finding 5: GLOBAL (every tenant) needs the platform operator role; a tenant admin acts
    within its own tenant, even when its token lists GLOBAL."""
    key = f"global/{tenant}"
    for who in ("alice_a1", "admin", "listing_admin", "other_admin", "isolated_operator"):
        refused = gql(SET, people[who], scope="GLOBAL", key=key, value="x")
        assert only_code_of(refused) == "FORBIDDEN", who
        assert refused["data"] is None
        assert only_code_of(gql(GET, people[who], scope="GLOBAL", key=key)) == "FORBIDDEN", who
    assert (
        "operator role"
        in gql(GET, people["admin"], scope="GLOBAL", key=key)["errors"][0]["message"]
    )
    written = gql(SET, people["operator"], scope="GLOBAL", key=key, value="shared")
    stamp = written["data"]["memorySet"]["provenance"]
    assert (stamp["agent"], stamp["origin"]) == ("ops-bot", "AGENT")
    # Another tenant's operator reads it with the writer in full: operators are the platform's.
    seen = gql(PROVENANCE, people["other_operator"], scope="GLOBAL", key=key)["data"]["memory"]
    assert seen["value"] == "shared"
    assert seen["provenance"]["agent"] == "ops-bot"
    assert seen["provenance"]["run"] == stamp["run"]
    assert seen["provenance"]["session"] == stamp["session"]
    assert seen["provenance"]["tenant"] == ""  # a GLOBAL row belongs to no tenant
    # An operator without an agent writes as origin operator.
    gql(SET, people["other_operator"], scope="GLOBAL", key=key + "/2", value=1)
    mine = gql(PROVENANCE, people["operator"], scope="GLOBAL", key=key + "/2")["data"]["memory"]
    assert (mine["provenance"]["origin"], mine["provenance"]["agent"]) == ("OPERATOR", None)
    # A tenant row and a global row under the same key are different rows.
    gql(SET, people["admin"], scope="TENANT", key=key, value="tenant-only")
    assert value_of(gql, people["operator"], "GLOBAL", key) == "shared"
    assert value_of(gql, people["operator"], "TENANT", key) == "tenant-only"
    assert value_of(gql, people["other_operator"], "TENANT", key) is None


def test_another_scopes_key_reads_exactly_like_a_missing_key(
    gql: Gql, people: dict[str, str]
) -> None:
    gql(SET, people["alice_a1"], scope="USER", key="private", value="secret")
    foreign = gql(GET, people["bob_a1"], scope="USER", key="private")
    missing = gql(GET, people["bob_a1"], scope="USER", key="never-written")
    assert foreign == missing == {"data": {"memory": None}}
    foreign_delete = gql(DELETE, people["bob_a1"], s="USER", k="private")
    missing_delete = gql(DELETE, people["bob_a1"], s="USER", k="never-written")
    assert foreign_delete == missing_delete == {"data": {"memoryDelete": {"deleted": False}}}
    assert value_of(gql, people["alice_a1"], "USER", "private") == "secret"


def test_missing_owner_ids_and_isolation_are_refused(
    gql: Gql, token: Callable[..., str], tenant: str
) -> None:
    no_user = token(tenant, None, "planner")
    no_agent = token(tenant, "carol", None, memory_scopes=[Scope.AGENT])
    isolated = token(tenant, "dave", "planner", isolated=True)
    narrow = token(tenant, "erin", "planner", memory_scopes=[Scope.AGENT, Scope.USER])
    assert "user id" in gql(GET, no_user, scope="USER", key="k")["errors"][0]["message"]
    assert only_code_of(gql(GET, no_agent, scope="AGENT", key="k")) == "FORBIDDEN"
    assert only_code_of(gql(SET, isolated, scope="TENANT", key="k", value=1)) == "FORBIDDEN"
    assert "isolated" in gql(GET, isolated, scope="TENANT", key="k")["errors"][0]["message"]
    assert value_of(gql, isolated, "USER", "k") is None  # USER still works
    refused = gql(SET, narrow, scope="TENANT", key="k", value=1)
    assert only_code_of(refused) == "FORBIDDEN"
    assert "memory_scopes" in refused["errors"][0]["message"]


def test_ttl_expires_and_negative_ttl_changes_nothing(gql: Gql, people: dict[str, str]) -> None:
    who = people["alice_a1"]
    # 3 s: a busy machine may take more than one second between two requests
    body = gql(SET, who, scope="USER", key="ttl/short", value="soon gone", ttl=3)
    assert body["data"]["memorySet"]["expiresAt"] is not None
    assert value_of(gql, who, "USER", "ttl/short") == "soon gone"
    time.sleep(3.3)
    assert value_of(gql, who, "USER", "ttl/short") is None
    gql(SET, who, scope="USER", key="ttl/neg", value="kept")
    refused = gql(SET, who, scope="USER", key="ttl/neg", value="replaced", ttl=-5)
    assert only_code_of(refused) == "INVALID_ARGUMENT"
    assert value_of(gql, who, "USER", "ttl/neg") == "kept"


def test_bad_values_and_unknown_scope_get_clear_errors_and_change_nothing(
    gql: Gql, people: dict[str, str], http: Any
) -> None:
    who = people["alice_a1"]
    gql(SET, who, scope="USER", key="bad/v", value="original")
    deep: Any = "leaf"
    for _ in range(80):
        deep = [deep]
    assert only_code_of(gql(SET, who, scope="USER", key="bad/v", value=deep)) == "INVALID_ARGUMENT"
    oversize = "x" * (300 * 1024)
    refused = gql(SET, who, scope="USER", key="bad/v", value=oversize)
    assert only_code_of(refused) == "QUOTA_EXCEEDED"
    assert "262144" in refused["errors"][0]["message"]
    unknown = gql('{ memory(scope: PLANET, key: "bad/v") { value } }', who)
    assert only_code_of(unknown) == "INVALID_ARGUMENT"
    assert only_code_of(gql(SET, who, scope="USER", key="", value=1)) == "INVALID_ARGUMENT"
    # An integer beyond 64 bits is refused by name, never rounded into a float.
    big = gql(SET, who, scope="USER", key="bad/v", value=123456789012345678901234567890)
    assert only_code_of(big) == "INVALID_ARGUMENT"
    assert "64 bits" in big["errors"][0]["message"]
    # A body that is not JSON (NaN is not a JSON literal) is refused whole.
    raw = b'{"query": "mutation($v: JSON!) { memorySet(scope: USER, key: \\"bad/v\\", '
    raw += b'value: $v) { key } }", "variables": {"v": NaN}}'
    response = http.post(
        "/graphql",
        content=raw,
        headers={"Authorization": f"Bearer {who}", "Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert value_of(gql, who, "USER", "bad/v") == "original"


def test_reducers(gql: Gql, people: dict[str, str]) -> None:
    who = people["bob_a1"]
    incr = """mutation($k: String!, $d: Float) {
      memoryIncrement(scope: USER, key: $k, delta: $d) { value } }"""
    assert gql(incr, who, k="n")["data"]["memoryIncrement"]["value"] == 1
    assert gql(incr, who, k="n", d=41)["data"]["memoryIncrement"]["value"] == 42
    assert gql(incr, who, k="n", d=-0.5)["data"]["memoryIncrement"]["value"] == 41.5
    gql(SET, who, scope="USER", key="s", value="text")
    assert only_code_of(gql(incr, who, k="s")) == "CONFLICT"
    assert value_of(gql, who, "USER", "s") == "text"

    merge = 'mutation($v: JSON!) { memoryMerge(scope: USER, key: "m", value: $v) { value } }'
    gql(SET, who, scope="USER", key="m", value={"a": {"c": 2}, "list": [1, 2]})
    merged = gql(merge, who, v={"a": {"b": 1}, "list": [3]})["data"]["memoryMerge"]["value"]
    assert merged == {"a": {"b": 1, "c": 2}, "list": [3]}

    append = """mutation($v: JSON!) { memoryAppendDedupe(scope: USER, key: "ad", value: $v)
      { appended entry { value } } }"""
    assert gql(append, who, v={"a": 1, "b": 2})["data"]["memoryAppendDedupe"]["appended"] is True
    again = gql(append, who, v={"b": 2, "a": 1})["data"]["memoryAppendDedupe"]
    assert again == {"appended": False, "entry": {"value": [{"a": 1, "b": 2}]}}

    bounded = """mutation($v: JSON!, $l: Int!) { memoryBoundedList(scope: USER, key: "bl",
      value: $v, limit: $l) { dropped entry { value } } }"""
    for item in ("one", "two"):
        assert gql(bounded, who, v=item, l=2)["data"]["memoryBoundedList"]["dropped"] == 0
    third = gql(bounded, who, v="three", l=2)["data"]["memoryBoundedList"]
    assert third == {"dropped": 1, "entry": {"value": ["two", "three"]}}
    assert only_code_of(gql(bounded, who, v="four", l=0)) == "INVALID_ARGUMENT"
    assert value_of(gql, who, "USER", "bl") == ["two", "three"]


def test_list_by_prefix_with_paging(gql: Gql, people: dict[str, str]) -> None:
    who = people["alice_a2"]
    for i in range(5):
        gql(SET, who, scope="AGENT", key=f"notes/{i}", value=i)
    gql(SET, who, scope="AGENT", key="other/x", value="x")
    page_q = """query($after: String) { memories(scope: AGENT, prefix: "notes/", limit: 2,
      after: $after) { items { key value } cursor hasMore } }"""
    seen: list[str] = []
    after = None
    while True:
        page = gql(page_q, who, after=after)["data"]["memories"]
        seen += [e["key"] for e in page["items"]]
        after = page["cursor"]
        assert page["hasMore"] is (after is not None)
        if after is None:
            break
    assert seen == [f"notes/{i}" for i in range(5)]
    too_many = gql("{ memories(scope: AGENT, limit: 5000) { cursor } }", who)
    assert only_code_of(too_many) == "INVALID_ARGUMENT"


def test_set_with_embedding_stores_a_vector(
    gql: Gql, people: dict[str, str], neo4j_driver: Any, tenant: str
) -> None:
    who = people["alice_a1"]
    body = gql(SET, who, scope="USER", key="emb", value="the cat sat on the mat", embed=True)
    assert body["data"]["memorySet"]["embedded"] is True
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (m:Memory {key: 'emb', tenant_id: $tenant}) RETURN size(m.embedding) AS dims",
        tenant=tenant,
    )
    assert [r["dims"] for r in records] == [384]


EMBED_TEXT = """mutation($key: String!, $text: String!) {
  memorySet(scope: USER, key: $key, value: 1, embed: true, embedText: $text) { key } }"""


def test_embed_text_is_capped_and_counted_against_the_quota(
    gql: Gql, token: Callable[..., str], neo4j_driver: Any
) -> None:
    tenant = f"q-{uuid.uuid4().hex[:8]}"
    who = token(tenant, "alice", "a1")
    huge = gql(EMBED_TEXT, who, key="big", text="word " * 2000)  # 10,000 characters
    assert only_code_of(huge) == "INVALID_ARGUMENT"
    assert "8192" in huge["errors"][0]["message"]
    assert gql('{ memory(scope: USER, key: "big") { key } }', who)["data"]["memory"] is None
    text = "sardines " * 100  # 900 bytes stored beside a 1-byte value
    assert "errors" not in gql(EMBED_TEXT, who, key="k", text=text)
    records, _, _ = neo4j_driver.execute_query(
        "MATCH (m:Memory {key: 'k', tenant_id: $tenant}) RETURN m.bytes AS b",
        tenant=tenant,
    )
    assert [r["b"] for r in records] == [len("k") + len("1") + len(text)]


def test_graph_recall_query_is_capped(gql: Gql, token: Callable[..., str]) -> None:
    who = token(f"q-{uuid.uuid4().hex[:8]}", "alice", "a1")
    body = gql(
        "query($q: String!) { graphRecall(scope: USER, query: $q) { facts { id } } }",
        who,
        q="x" * 4001,
    )
    assert only_code_of(body) == "INVALID_ARGUMENT"
