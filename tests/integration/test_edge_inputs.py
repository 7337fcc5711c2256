"""Malformed input at the edge gets a coded GraphQL error, never INTERNAL or a plain-text 500
(issue 11, findings 6 and 8; issue 10, item 3), through the real HTTP app."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import httpx
import jwt
import pytest

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.identity.tokens import load_keys

ANONYMOUS_MAX_BYTES = Settings().limits.anonymous_max_bytes

BAD_BODIES = {
    "string": b'"x"',
    "null": b"null",
    "number": b"5",
    "true": b"true",
    "array": b"[]",
    "batch": b'[{"query": "{ health }"}]',
    "empty-object": b"{}",
    "query-not-string": b'{"query": 5}',
    "variables-not-object": b'{"query": "{ health }", "variables": [1]}',
    "operation-name-not-string": b'{"query": "{ health }", "operationName": 1}',
    "invalid-utf8": b'{"query": "{ health }\xff"}',
    "utf16": '{"query": "{ health }"}'.encode("utf-16"),
    "nested-1100": b'{"query": "{ health }", "variables": {"v": '
    + b"[" * 1100
    + b"]" * 1100
    + b"}}",
    "integer-4301-digits": b'{"query": "{ health }", "variables": {"v": ' + b"9" * 4301 + b"}}",
    "nan": b'{"query": "{ health }", "variables": {"v": NaN}}',
    "not-json": b"hello",
    "empty": b"",
}


def post_raw(
    http: httpx.Client, body: bytes, bearer: str | None, content_type: str = "application/json"
) -> httpx.Response:
    headers = {"Content-Type": content_type}
    if bearer:
        headers["Authorization"] = f"Bearer {bearer}"
    return http.post("/graphql", content=body, headers=headers)


def coded(response: httpx.Response) -> dict[str, Any]:
    assert response.headers["content-type"].startswith("application/json"), response.text
    body = response.json()
    assert body.get("data") is None, body
    [error] = body["errors"]
    assert isinstance(error["message"], str)
    assert isinstance(error, dict)
    return error


@pytest.fixture(scope="module")
def bearer(token: Callable[..., str], tenant: str) -> str:
    return token(tenant, "input-user", "input-agent")


@pytest.mark.parametrize("with_token", [True, False], ids=["token", "tokenless"])
@pytest.mark.parametrize("kind", sorted(BAD_BODIES))
def test_malformed_bodies_get_one_coded_error(
    http: httpx.Client, bearer: str, kind: str, with_token: bool
) -> None:
    body = BAD_BODIES[kind]
    response = post_raw(http, body, bearer if with_token else None)
    error = coded(response)
    if not with_token and len(body) > ANONYMOUS_MAX_BYTES:
        # Without a token, a body too big to be `{ health }` is refused before it is read.
        assert (response.status_code, error["extensions"]["code"]) == (401, "UNAUTHENTICATED")
    else:
        assert (response.status_code, error["extensions"]["code"]) == (400, "INVALID_ARGUMENT")


@pytest.mark.parametrize("with_token", [True, False], ids=["token", "tokenless"])
def test_non_json_content_types_get_a_coded_error(
    http: httpx.Client, bearer: str, with_token: bool
) -> None:
    response = post_raw(http, b"{ health }", bearer if with_token else None, "text/plain")
    assert response.status_code == 400
    assert coded(response)["extensions"]["code"] == "INVALID_ARGUMENT"


def test_strawberry_refusals_are_coded_too(http: httpx.Client, bearer: str) -> None:
    auth = {"Authorization": f"Bearer {bearer}"}
    mutation = http.get(
        "/graphql",
        params={"query": 'mutation { memoryDelete(scope: USER, key: "k") { deleted } }'},
        headers=auth,
    )
    unknown_operation = http.post(
        "/graphql", json={"query": "query A { health }", "operationName": "B"}, headers=auth
    )
    for response in (mutation, unknown_operation):
        assert response.status_code == 400
        assert coded(response)["extensions"]["code"] == "INVALID_ARGUMENT"
    put = http.put("/graphql", json={"query": "{ health }"}, headers=auth)
    assert put.status_code == 405
    assert coded(put)["extensions"]["code"] == "INVALID_ARGUMENT"


WRITE = "mutation($k: String!, $v: JSON!) { memorySet(scope: USER, key: $k, value: $v) { key } }"
EMBED = (
    "mutation($k: String!, $v: String) { memorySet(scope: USER, key: $k, value: 1, embed: true,"
    " embedText: $v) { key } }"
)
# Each case: the operation, a value it accepts, and the same value with a lone surrogate.
SURROGATE_CASES: dict[str, tuple[str, Any, Any]] = {
    "memory key": (
        "query($v: String!) { memory(scope: USER, key: $v) { key } }",
        "fine",
        "\ud800",
    ),
    "memorySet value": (WRITE, {"nested": ["ok", "ab"]}, {"nested": ["ok", "a\udfffb"]}),
    "JSON object key": (WRITE, {"k": 1}, {"\ud83d": 1}),
    "embedText": (EMBED, "text", "text \udc00"),
    "search query": (
        "query($v: String!) { search(scope: USER, query: $v) { scopes } }",
        "words",
        "\ud800",
    ),
    "markdown": (
        "mutation($v: String!) { importDocument(scope: USER, markdown: $v) { markdown } }",
        "# T\n",
        "# T\n\ud800",
    ),
    "sql statement": (
        "query($v: String!) { sqlQuery(scope: USER, statement: $v) { rows } }",
        "SELECT 'a'",
        "SELECT '\ud800'",
    ),
    "date": (
        "query($v: Instant) { facts(scope: USER, asOf: $v) { items { id } } }",
        "2020",
        "2020\ud800",
    ),
}


def send(http: httpx.Client, bearer: str, payload: dict[str, Any]) -> httpx.Response:
    # json.dumps writes a lone surrogate as its escape, which JSON allows and Python reads back.
    return post_raw(http, json.dumps(payload).encode(), bearer)


@pytest.mark.parametrize("case", sorted(SURROGATE_CASES))
def test_lone_surrogates_are_refused_and_never_echoed(
    http: httpx.Client, bearer: str, case: str
) -> None:
    query, clean, dirty = SURROGATE_CASES[case]
    key = f"sur-{case.replace(' ', '-')}"
    accepted = send(http, bearer, {"query": query, "variables": {"v": clean, "k": key + "-ok"}})
    assert "errors" not in accepted.json(), accepted.json()  # the operation itself is fine
    response = send(http, bearer, {"query": query, "variables": {"v": dirty, "k": key}})
    assert response.status_code == 400
    error = coded(response)
    assert error["extensions"]["code"] == "INVALID_ARGUMENT"
    assert "surrogate" in error["message"]
    raw = response.content.decode("utf-8")  # strict: the response is valid UTF-8
    assert "\\ud" not in raw.lower()
    assert not any("\ud800" <= ch <= "\udfff" for ch in raw)
    read = send(
        http,
        bearer,
        {
            "query": "query($k: String!) { memory(scope: USER, key: $k) { key } }",
            "variables": {"k": key},
        },
    )
    assert read.json() == {"data": {"memory": None}}  # nothing was written


@pytest.mark.parametrize(
    "body",
    [
        {"query": "{ health }\ud800"},  # in the document text itself
        {"query": "query Q { health }", "operationName": "Q\ud800"},
        {"query": "{ health }", "extensions": {"x": "\udbff"}},
    ],
    ids=["document", "operation-name", "extensions"],
)
@pytest.mark.parametrize("with_token", [True, False], ids=["token", "tokenless"])
def test_surrogates_anywhere_in_the_request_are_refused(
    http: httpx.Client, bearer: str, body: dict[str, Any], with_token: bool
) -> None:
    response = post_raw(http, json.dumps(body).encode(), bearer if with_token else None)
    assert response.status_code == 400
    assert coded(response)["extensions"]["code"] == "INVALID_ARGUMENT"


def test_an_inline_integer_over_4300_digits_is_an_invalid_argument(
    http: httpx.Client, bearer: str
) -> None:
    query = 'mutation { memorySet(scope: USER, key: "k", value: 1, ttlSeconds: %s) { key } }'
    response = http.post(
        "/graphql",
        json={"query": query % ("9" * 5000)},
        headers={"Authorization": f"Bearer {bearer}"},
    )
    assert coded(response)["extensions"]["code"] == "INVALID_ARGUMENT"


def test_an_escaped_surrogate_inside_a_graphql_string_is_a_syntax_error(
    http: httpx.Client, bearer: str
) -> None:
    query = '{ memory(scope: USER, key: "\\ud800") { key } }'  # GraphQL's own escape
    body = http.post(
        "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {bearer}"}
    )
    assert coded(body)["extensions"]["code"] == "INVALID_ARGUMENT"


EDGE = "9999-12-31T23:59:59-23:59"
LOW_EDGE = "0001-01-01T00:00:00+23:59"
DATED_FIELDS = {
    "facts.asOf": '{{ facts(scope: USER, asOf: "{t}") {{ id }} }}',
    "facts.knownAt": '{{ facts(scope: USER, knownAt: "{t}") {{ id }} }}',
    "search.when.from": '{{ search(scope: USER, query: "q", when: {{from: "{t}"}}) {{ scopes }} }}',
    "search.when.to": '{{ search(scope: USER, query: "q", when: {{to: "{t}"}}) {{ scopes }} }}',
    "search.when.asOf": '{{ search(scope: USER, query: "q", when: {{asOf: "{t}"}}) {{ scopes }} }}',
    "recall.when.knownAt": (
        '{{ recall(scope: USER, query: "q", when: {{knownAt: "{t}"}}) {{ scopes }} }}'
    ),
    "graphRecall.asOf": (
        '{{ graphRecall(scope: USER, query: "q", asOf: "{t}") {{ facts {{ id }} }} }}'
    ),
    "assertFacts.validAt": (
        'mutation {{ assertFacts(scope: USER, place: false, facts: [{{subject: {{type: "c",'
        ' name: "edge"}}, predicate: "p", objectValue: "o", validAt: "{t}"}}]) {{ created }} }}'
    ),
    "assertFacts.invalidAt": (
        'mutation {{ assertFacts(scope: USER, place: false, facts: [{{subject: {{type: "c",'
        ' name: "edge"}}, predicate: "p", objectValue: "o", invalidAt: "{t}"}}]) {{ created }} }}'
    ),
    "assertFacts.observedAt": (
        'mutation {{ assertFacts(scope: USER, place: false, facts: [{{subject: {{type: "c",'
        ' name: "edge"}}, predicate: "p", objectValue: "o", observedAt: "{t}"}}]) {{ created }} }}'
    ),
    "importDocument.observedAt": (
        'mutation {{ importDocument(scope: USER, markdown: "# edge", observedAt: "{t}")'
        " {{ markdown }} }}"
    ),
    "importDocuments.observedAt": (
        'mutation {{ importDocuments(scope: USER, documents: [{{markdown: "# edge",'
        ' observedAt: "{t}"}}]) {{ markdown }} }}'
    ),
}


@pytest.mark.parametrize("moment", [EDGE, LOW_EDGE])
@pytest.mark.parametrize("field", sorted(DATED_FIELDS))
def test_timestamps_past_the_range_are_invalid_arguments(
    http: httpx.Client, bearer: str, field: str, moment: str
) -> None:
    query = DATED_FIELDS[field].format(t=moment)
    response = http.post(
        "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {bearer}"}
    )
    error = response.json()["errors"][0]
    assert error["extensions"]["code"] == "INVALID_ARGUMENT", error
    assert "outside" in error["message"]  # refused by the date check, not by validation


def test_nothing_dated_past_the_range_was_written(http: httpx.Client, bearer: str) -> None:
    auth = {"Authorization": f"Bearer {bearer}"}
    facts = http.post(
        "/graphql",
        json={
            "query": '{ facts(scope: USER, subject: {type: "c", name: "edge"}) { items { id } } }'
        },
        headers=auth,
    )
    assert facts.json() == {"data": {"facts": {"items": []}}}


def test_retracting_with_an_edge_timestamp_changes_nothing(http: httpx.Client, bearer: str) -> None:
    auth = {"Authorization": f"Bearer {bearer}"}
    made = http.post(
        "/graphql",
        json={
            "query": "mutation { assertFacts(scope: USER, place: false, facts: [{subject:"
            ' {type: "c", name: "retractable"}, predicate: "p", objectValue: "o"}])'
            " { fact { id } } }"
        },
        headers=auth,
    ).json()
    fact_id = made["data"]["assertFacts"][0]["fact"]["id"]
    retract = (
        "mutation($id: ID!, $t: Instant) {"
        " retractFact(scope: USER, id: $id, invalidAt: $t) { id } }"
    )
    refused = http.post(
        "/graphql", json={"query": retract, "variables": {"id": fact_id, "t": EDGE}}, headers=auth
    ).json()
    assert refused["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    after = http.post(
        "/graphql",
        json={
            "query": "query($id: ID!) { fact(scope: USER, id: $id) { invalidAt } }",
            "variables": {"id": fact_id},
        },
        headers=auth,
    ).json()
    assert after == {"data": {"fact": {"invalidAt": None}}}


@pytest.mark.parametrize("slack", ["99999999999999999999d", "106751992d", "3651d", "\u0663d"])
def test_huge_slack_is_an_invalid_argument(http: httpx.Client, bearer: str, slack: str) -> None:
    query = (
        'query($s: String) { search(scope: USER, query: "q", when: {from: "2020", missing: REQUIRE,'
        " slack: $s}) { timeFilter { slackSeconds } } }"
    )
    body = http.post(
        "/graphql",
        json={"query": query, "variables": {"s": slack}},
        headers={"Authorization": f"Bearer {bearer}"},
    ).json()
    error = body["errors"][0]
    assert error["extensions"]["code"] == "INVALID_ARGUMENT"
    assert "when.slack" in error["message"]


def test_the_largest_slack_is_reported_within_a_graphql_int(
    http: httpx.Client, bearer: str
) -> None:
    query = (
        'query { search(scope: USER, query: "q", when: {from: "2020", missing: REQUIRE,'
        ' slack: "3650d"}) { timeFilter { slackSeconds } } }'
    )
    body = http.post(
        "/graphql", json={"query": query}, headers={"Authorization": f"Bearer {bearer}"}
    )
    assert body.json() == {"data": {"search": {"timeFilter": {"slackSeconds": 3650 * 86400}}}}


MEMORY = "query($k: String!) { memory(scope: USER, key: $k) { key } }"
BY_SCOPE = 'query($s: Scope!) { memory(scope: $s, key: "k") { key } }'
FACTS = "mutation($f: [FactInput!]!) { assertFacts(scope: USER, facts: $f) { created } }"
TTL = (
    'mutation($t: Int) { memorySet(scope: USER, key: "coerce", value: 1, ttlSeconds: $t) { key } }'
)
COERCION = {
    "missing required": (MEMORY, {}, "k"),
    "null required": (MEMORY, {"k": None}, "k"),
    "wrong type": (MEMORY, {"k": 5}, "k"),
    "list for a string": (MEMORY, {"k": ["a"]}, "k"),
    "bad enum": (BY_SCOPE, {"s": "PLANET"}, "s"),
    "enum as number": (BY_SCOPE, {"s": 3}, "s"),
    "lower-case enum": (BY_SCOPE, {"s": "user"}, "s"),
    "input field missing": (FACTS, {"f": [{"predicate": "p"}]}, "f"),
    "input field unknown": (
        FACTS,
        {"f": [{"subject": {"type": "c", "name": "n"}, "predicate": "p", "nope": 1}]},
        "f",
    ),
    "int over 32 bits": (TTL, {"t": 2**40}, "t"),
    "float for an int": (TTL, {"t": 1.5}, "t"),
}


@pytest.mark.parametrize("case", sorted(COERCION))
def test_variable_coercion_mistakes_name_the_variable(
    http: httpx.Client, bearer: str, case: str
) -> None:
    query, variables, name = COERCION[case]
    response = http.post(
        "/graphql",
        json={"query": query, "variables": variables},
        headers={"Authorization": f"Bearer {bearer}"},
    )
    error = coded(response)
    assert error["extensions"]["code"] == "INVALID_ARGUMENT"
    assert error["extensions"]["variable"] == name
    assert f"${name}" in error["message"]


def test_tokens_with_numeric_string_times_are_refused(
    http: httpx.Client, settings: Settings, tenant: str
) -> None:
    now = int(time.time())
    secret = load_keys(settings).sign_key
    assert isinstance(secret, bytes)
    claims = {"iss": settings.auth.issuer, "aud": settings.auth.audience, "tenant": tenant}
    good = jwt.encode({**claims, "iat": now, "exp": now + 600}, secret, algorithm="HS256")
    for bad in ({"iat": now, "exp": str(now + 600)}, {"iat": str(now), "exp": now + 600}):
        token = jwt.encode({**claims, **bad}, secret, algorithm="HS256")
        response = http.post(
            "/graphql",
            json={"query": "{ me { tenant } }"},
            headers={"Authorization": f"Bearer {token}"},
        )
        assert response.status_code == 401
        assert coded(response)["extensions"]["code"] == "UNAUTHENTICATED"
    fine = http.post(
        "/graphql", json={"query": "{ me { tenant } }"}, headers={"Authorization": f"Bearer {good}"}
    )
    assert fine.json() == {"data": {"me": {"tenant": tenant}}}


def test_oversized_tokens_are_refused(http: httpx.Client, settings: Settings, tenant: str) -> None:
    now = int(time.time())
    secret = load_keys(settings).sign_key
    assert isinstance(secret, bytes)
    claims = {
        "iss": settings.auth.issuer,
        "aud": settings.auth.audience,
        "tenant": tenant,
        "iat": now,
        "exp": now + 600,
        "padding": "p" * settings.auth.max_bytes,
    }
    token = jwt.encode(claims, secret, algorithm="HS256")  # validly signed, just too big
    response = http.post(
        "/graphql",
        json={"query": "{ me { tenant } }"},
        headers={"Authorization": f"Bearer {token}"},
    )
    assert response.status_code == 401
    error = coded(response)
    assert error["extensions"]["code"] == "UNAUTHENTICATED"
    assert str(settings.auth.max_bytes) in error["message"]


def test_me_lists_only_scopes_the_token_can_reach(
    http: httpx.Client, token: Callable[..., str], tenant: str
) -> None:
    query = {"query": "{ me { memoryScopes sqlScopes } }"}
    bare = token(tenant)  # no user, no agent
    me = http.post("/graphql", json=query, headers={"Authorization": f"Bearer {bare}"}).json()
    assert me == {"data": {"me": {"memoryScopes": ["TENANT"], "sqlScopes": []}}}
    listed = token(tenant, "u1", memory_scopes=[Scope.AGENT, Scope.USER])  # AGENT but no agent
    me = http.post("/graphql", json=query, headers={"Authorization": f"Bearer {listed}"}).json()
    assert me["data"]["me"]["memoryScopes"] == ["USER"]
