"""The GraphQL edge under attack (issue 11, findings 1, 2 and 8) through the real HTTP app.

Refusals are asserted by their codes, never by timings; `palimpsest bench edge` measures how
fast they come and how /healthz answers meanwhile.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
from graphql import get_introspection_query

from palimpsest.config import Settings
from palimpsest.server import serve_in_thread

SMALL_BODY_CAP = 64 * 1024


def repeated_fields(n: int) -> str:
    return "{ " + " ".join("me { tenant }" for _ in range(n)) + " }"


def many_fragments(n: int) -> str:
    spreads = " ".join(
        f"fragment F{i} on Query {{ me {{ tenant }} ...F{i + 1} }}" for i in range(n)
    )
    return "{ ...F0 } " + spreads + f" fragment F{n} on Query {{ health }}"


def flat_fragments(n: int) -> str:
    # Every fragment spread at the root: validation compares them pairwise.
    spreads = " ".join(f"...F{i}" for i in range(n))
    return (
        "{ "
        + spreads
        + " } "
        + " ".join(f"fragment F{i} on Query {{ me {{ tenant }} }}" for i in range(n))
    )


ATTACKS = {
    "repeated-fields": repeated_fields(500),
    "600-fragments": many_fragments(600),
    "600-flat-fragments": flat_fragments(600),
}


def post(
    http: httpx.Client, query: str, bearer: str | None = None, **variables: Any
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    return http.post("/graphql", json={"query": query, "variables": variables}, headers=headers)


def only_error(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert body.get("data") is None, body
    [error] = body["errors"]
    assert isinstance(error, dict)
    return error


@pytest.fixture(scope="module")
def bearer(token: Callable[..., str], tenant: str) -> str:
    return token(tenant, "edge-user", "edge-agent")


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_tokenless_attack_documents_are_refused_before_parsing(
    http: httpx.Client, attack: str
) -> None:
    response = post(http, ATTACKS[attack])
    assert response.status_code == 401
    error = only_error(response)
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    assert "health" in error["message"]


def test_tokenless_callers_keep_health_typename_and_introspection(http: httpx.Client) -> None:
    assert post(http, "{ health }").json() == {"data": {"health": "ok"}}
    assert post(http, "query { __typename }").json() == {"data": {"__typename": "Query"}}
    schema = post(http, "{ __schema { queryType { name } } }").json()
    assert schema == {"data": {"__schema": {"queryType": {"name": "Query"}}}}
    # The full introspection GraphiQL sends on load, with every option it may turn on.
    full = get_introspection_query(
        descriptions=True,
        specified_by_url=True,
        directive_is_repeatable=True,
        schema_description=True,
        input_value_deprecation=True,
        experimental_directive_deprecation=True,
        one_of=True,
    )
    body = http.post("/graphql", json={"query": full, "operationName": "IntrospectionQuery"}).json()
    assert "errors" not in body, body
    assert "memorySet" in {
        f["name"]
        for t in body["data"]["__schema"]["types"]
        if t["name"] == "Mutation"
        for f in t["fields"]
    }
    # ...and nothing else, however it is spelled: a data field behind a fragment, over GET.
    hidden = post(http, "{ health ...F } fragment F on Query { me { tenant } }")
    assert hidden.status_code == 401
    over_get = http.get("/graphql", params={"query": "{ me { tenant } }"})
    assert over_get.status_code == 401
    assert only_error(over_get)["extensions"]["code"] == "UNAUTHENTICATED"


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_authenticated_attack_documents_get_a_coded_refusal(
    http: httpx.Client, bearer: str, attack: str
) -> None:
    response = post(http, ATTACKS[attack], bearer)
    assert response.status_code == 200
    error = only_error(response)
    assert error["extensions"]["code"] == "INVALID_ARGUMENT"
    # Refused by a limit (which one depends on the document), not by validation.
    assert error["extensions"]["limit"] in {"maxQueryFields", "maxQueryTokens"}
    assert error["extensions"]["allowed"] < 10_000


def test_health_answers_while_attacks_run(
    live_server_url: str, bearer: str, http: httpx.Client
) -> None:
    def attack(i: int) -> int:
        query = ATTACKS[sorted(ATTACKS)[i % 3]]
        headers = {"Authorization": f"Bearer {bearer}"} if i % 4 < 2 else {}
        with httpx.Client(base_url=live_server_url, timeout=60) as client:
            response = client.post("/graphql", json={"query": query}, headers=headers)
            return response.status_code

    def health(_: int) -> int:
        with httpx.Client(base_url=live_server_url, timeout=60) as client:
            return client.get("/healthz").status_code

    with ThreadPoolExecutor(max_workers=12) as pool:
        attacks = [pool.submit(attack, i) for i in range(16)]
        checks = [pool.submit(health, i) for i in range(16)]
        statuses = [f.result() for f in attacks]
        healthy = [f.result() for f in checks]
    assert sorted(set(statuses)) == [200, 401]  # coded refusals with and without a token
    assert healthy == [200] * 16
    assert post(http, "{ me { tenant } }", bearer).json()["data"]["me"]["tenant"]


def aliased(field: str, n: int) -> str:
    return " ".join(f"a{i}: {field}" for i in range(n))


def test_two_hundred_aliased_searches_are_one_quota_refusal(
    http: httpx.Client, bearer: str
) -> None:
    query = "{ " + aliased('search(scope: USER, query: "q") { scopes }', 200) + " }"
    error = only_error(post(http, query, bearer))
    assert error["extensions"] == {
        "code": "QUOTA_EXCEEDED",
        "limit": "maxRootFields",
        "allowed": 20,
        "requested": 200,
    }
    assert "200 root fields" in error["message"]
    assert "PALIMPSEST_MAX_ROOT_FIELDS" in error["message"]


def test_embedding_calls_per_operation_are_capped_and_nothing_is_written(
    http: httpx.Client, bearer: str
) -> None:
    sets = aliased('memorySet(scope: USER, key: "edge-embed", value: "v", embed: true) { key }', 11)
    error = only_error(post(http, "mutation { " + sets + " }", bearer))
    assert error["extensions"]["code"] == "QUOTA_EXCEEDED"
    assert error["extensions"]["limit"] == "maxOperationEmbeddings"
    assert error["extensions"]["requested"] == 11
    assert error["extensions"]["allowed"] == 10
    read = post(http, '{ memory(scope: USER, key: "edge-embed") { key } }', bearer).json()
    assert read == {"data": {"memory": None}}
    # The same through a variable: the cost check reads the variable's value.
    one = 'memorySet(scope: USER, key: "edge-embed", value: "v", embed: $e) { key }'
    vars_query = "mutation($e: Boolean!) { " + aliased(one, 11) + " }"
    assert only_error(post(http, vars_query, bearer, e=True))["extensions"]["limit"] == (
        "maxOperationEmbeddings"
    )
    written = post(http, vars_query, bearer, e=False).json()
    assert "errors" not in written, written
    assert written["data"]["a10"]["key"] == "edge-embed"


def test_a_document_seen_before_is_still_costed_by_its_variables(
    http: httpx.Client, bearer: str
) -> None:
    one = 'memorySet(scope: USER, key: "edge-cached", value: "v", embed: $e) { key }'
    query = "mutation($e: Boolean!) { " + aliased(one, 11) + " }"
    for _ in range(2):  # valid: parsed and validated once, then served from the cache
        written = post(http, query, bearer, e=False).json()
        assert "errors" not in written, written
    error = only_error(post(http, query, bearer, e=True))
    assert error["extensions"]["code"] == "QUOTA_EXCEEDED"
    assert error["extensions"]["limit"] == "maxOperationEmbeddings"
    assert error["extensions"]["requested"] == 11


def test_index_calls_per_operation_are_capped(http: httpx.Client, bearer: str) -> None:
    wide = 'search(scope: USER, query: "q", alsoScopes: $also) { scopes }'
    query = "query($also: [Scope!]) { " + aliased(wide, 3) + " }"
    error = only_error(post(http, query, bearer, also=["TENANT", "AGENT", "GLOBAL"]))
    # 3 searches x 3 sources x 4 scopes x 2 legs (a vector and a full-text leg).
    assert error["extensions"] == {
        "code": "QUOTA_EXCEEDED",
        "limit": "maxOperationIndexCalls",
        "allowed": 60,
        "requested": 72,
    }
    narrow = post(http, query, bearer, also=["TENANT"]).json()  # 36 index calls
    assert "errors" not in narrow, narrow
    assert narrow["data"]["a2"]["scopes"] == ["USER", "TENANT"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def edge_server(settings: Settings) -> Iterator[tuple[str, str]]:
    """A second app with its own metrics listener and a small request body cap."""
    port = free_port()
    custom = settings.replace(metrics_port=port, max_request_bytes=SMALL_BODY_CAP)
    with serve_in_thread(custom) as url:
        yield url, f"http://127.0.0.1:{port}"


def test_metrics_are_served_only_on_their_own_listener(
    http: httpx.Client, edge_server: tuple[str, str]
) -> None:
    assert http.get("/metrics").status_code == 404  # the API port never serves them
    api, metrics = edge_server
    assert httpx.post(f"{api}/graphql", json={"query": "{ health }"}).status_code == 200
    assert httpx.get(f"{api}/metrics").status_code == 404
    text = httpx.get(f"{metrics}/metrics").text
    assert 'palimpsest_graphql_operation_seconds_count{field="health"}' in text
    assert httpx.post(f"{metrics}/graphql", json={"query": "{ health }"}).status_code == 404


@pytest.mark.parametrize("chunked", [False, True])
def test_bodies_over_the_cap_are_413_before_parsing(
    edge_server: tuple[str, str], bearer: str, chunked: bool
) -> None:
    api, _ = edge_server
    body = b'{"query": "{ health }", "variables": {"pad": "' + b"x" * SMALL_BODY_CAP + b'"}}'
    content: bytes | Iterator[bytes] = body
    if chunked:  # no Content-Length: the cap holds while the body streams in
        content = iter([body[i : i + 8192] for i in range(0, len(body), 8192)])
    response = httpx.post(
        f"{api}/graphql",
        content=content,
        headers={"Authorization": f"Bearer {bearer}", "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    error = only_error(response)
    assert error["extensions"] == {
        "code": "INVALID_ARGUMENT",
        "limit": "maxRequestBytes",
        "allowed": SMALL_BODY_CAP,
    }
    fits = httpx.post(
        f"{api}/graphql",
        json={"query": "{ health }", "variables": {"pad": "x" * 1000}},
        headers={"Authorization": f"Bearer {bearer}"},
    )
    assert fits.json() == {"data": {"health": "ok"}}


def test_tokenless_bodies_over_the_small_cap_are_401(http: httpx.Client) -> None:
    padded = {"query": "{ health }", "variables": {"pad": "x" * 5000}}
    response = http.post("/graphql", json=padded)
    assert response.status_code == 401
    assert only_error(response)["extensions"]["code"] == "UNAUTHENTICATED"
