"""Tokens at the door, operational endpoints, the schema in Neo4j, and log hygiene."""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import jwt
import pytest

from palimpsest.config import Settings
from palimpsest.cypher.indexes import apply_schema
from palimpsest.identity.tokens import load_keys
from palimpsest.resolvers.services import Services
from tests.integration.conftest import Gql

ME = "{ me { tenant user agent roles memoryScopes sqlScopes isolated } }"


def test_me_reflects_the_token(gql: Gql, token: Callable[..., str], tenant: str) -> None:
    body = gql(ME, token(tenant, "alice", "planner"))
    assert body["data"]["me"] == {
        "tenant": tenant,
        "user": "alice",
        "agent": "planner",
        "roles": [],
        "memoryScopes": ["USER", "TENANT"],
        "sqlScopes": ["USER"],
        "isolated": False,
    }


def test_no_token_reaches_only_health(gql: Gql, http: httpx.Client) -> None:
    assert gql("{ health }") == {"data": {"health": "ok"}}
    # Refused before the document is even parsed: one error, no data, HTTP 401.
    response = http.post("/graphql", json={"query": '{ memory(scope: USER, key: "k") { value } }'})
    assert response.status_code == 401
    [error] = response.json()["errors"]
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    assert "data" not in response.json()


def _refusal(http: httpx.Client, bearer: str) -> tuple[int, list[dict[str, Any]]]:
    response = http.post(
        "/graphql", json={"query": "{ me { tenant } }"}, headers={"Authorization": bearer}
    )
    return response.status_code, response.json()["errors"]


@pytest.mark.parametrize("kind", ["expired", "wrong-audience", "wrong-key", "unsigned", "junk"])
def test_bad_tokens_get_one_unauthenticated_error(
    http: httpx.Client, settings: Settings, tenant: str, kind: str
) -> None:
    now = int(time.time())
    claims = {
        "iss": settings.auth.issuer,
        "aud": settings.auth.audience,
        "tenant": tenant,
        "user": "alice",
        "iat": now - 7200,
        "exp": now + 600,
    }
    secret = load_keys(settings).sign_key
    assert isinstance(secret, bytes)
    if kind == "expired":
        token = jwt.encode({**claims, "exp": now - 3600}, secret, algorithm="HS256")
    elif kind == "wrong-audience":
        token = jwt.encode({**claims, "aud": "someone-else"}, secret, algorithm="HS256")
    elif kind == "wrong-key":
        token = jwt.encode(claims, b"k" * 40, algorithm="HS256")
    elif kind == "unsigned":
        token = jwt.encode(claims, None, algorithm="none")  # type: ignore[arg-type]
    else:
        token = "not-a-token"
    status, errors = _refusal(http, f"Bearer {token}")
    assert status == 401
    assert len(errors) == 1
    assert errors[0]["extensions"]["code"] == "UNAUTHENTICATED"
    if kind == "expired":
        assert "expired" in errors[0]["message"]


def test_health_readiness_and_browser(http: httpx.Client, settings: Settings) -> None:
    # /metrics has its own listener (test_edge_limits.py covers it).
    assert http.get("/healthz").json() == {"status": "ok"}
    ready = http.get("/readyz")
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"
    browser = httpx.get(f"http://127.0.0.1:{settings.neo4j.http_port}/browser/", timeout=10)
    assert browser.status_code == 200
    assert "Neo4j Browser" in browser.text


def test_schema_lists_every_index_online(neo4j_driver: Any) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "SHOW INDEXES YIELD name, type, state RETURN name, type, state"
    )
    found = {r["name"]: (r["type"], r["state"]) for r in records}
    expected = {
        "memory_key": "RANGE",
        "chunk_scope": "RANGE",
        "fact_scope": "RANGE",
        "fact_validity": "RANGE",
        "memory_embedding": "VECTOR",
        "chunk_embedding": "VECTOR",
        "fact_embedding": "VECTOR",
        "passage_embedding": "VECTOR",
        "passage_scope": "RANGE",
        "passage_chunk": "RANGE",
        "memory_terms": "FULLTEXT",
        "chunk_terms": "FULLTEXT",
        "fact_terms": "FULLTEXT",
    }
    for name, kind in expected.items():
        assert found.get(name) == (kind, "ONLINE"), name
    # The Lucene-ranked indexes of earlier versions are dropped by the schema set-up.
    assert {"memory_text", "chunk_text", "fact_text"}.isdisjoint(found)


async def test_schema_set_up_remakes_an_index_of_another_shape(
    neo4j_driver: Any, svc: Services, settings: Settings
) -> None:
    # An earlier version made ``pending_scope`` on (scope_key, status); ``IF NOT EXISTS`` kept
    # that shape on upgraded databases, and every read by scope_key alone scanned the label.
    def shape() -> list[str]:
        records, _, _ = neo4j_driver.execute_query(
            "SHOW INDEXES YIELD name, properties WHERE name = 'pending_scope' RETURN properties"
        )
        return [p for r in records for p in r["properties"]]

    neo4j_driver.execute_query("DROP INDEX pending_scope IF EXISTS")
    neo4j_driver.execute_query(
        "CREATE INDEX pending_scope FOR (p:PendingSpan) ON (p.scope_key, p.created_at)"
    )
    assert shape() == ["scope_key", "created_at"]
    await apply_schema(svc.db, settings.embedding.model, settings.embedding.dimensions)
    assert shape() == ["scope_key"]


@pytest.fixture
def all_logs() -> Iterator[list[str]]:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Keep(level=logging.DEBUG)
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def test_logs_never_carry_values_tokens_or_parameters(
    gql: Gql, token: Callable[..., str], tenant: str, all_logs: list[str]
) -> None:
    secret_value = "zebra-quartz-secret-value"
    secret_key = "key-kumquat-77"
    bearer = token(tenant, "alice", "planner")
    gql(
        "mutation($k: String!, $v: JSON!) { memorySet(scope: USER, key: $k, value: $v) { key } }",
        bearer,
        k=secret_key,
        v=secret_value,
    )
    gql(
        "mutation($k: String!) { memoryIncrement(scope: USER, key: $k) { key } }",
        bearer,
        k=secret_key,
    )  # a refused call logs too
    text = "\n".join(all_logs)
    assert "memorySet" in text or "cypher" in text  # the capture really saw the request
    for needle in (secret_value, secret_key, bearer):
        assert needle not in text


def test_what_start_up_built_is_kept_out_of_garbage_collection(http: httpx.Client) -> None:
    """The server (in this process) froze start-up's objects: a request's allocations no
    longer make the collector walk the schema, the model and the driver again."""
    assert http.get("/healthz").status_code == 200
    assert gc.get_freeze_count() > 10_000
