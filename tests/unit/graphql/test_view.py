"""The GraphQL view's edge (``graphql.view``) as an ASGI app over the recording executor:
each refusal before GraphQL runs is one coded error with its HTTP status, and an admitted
request reaches the resolvers (its document cached per tenant)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from palimpsest.graphql.limits import EdgeLimits
from palimpsest.graphql.schema import build_schema
from palimpsest.graphql.view import GraphQLView, PreparedDocument
from palimpsest.identity import Principal
from palimpsest.middleware.auth import AuthenticatedCaller
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal
from tests.unit.recording import RecordingExecutor, services
from tests.unit.resolvers.documents.test_catalog import DOC, Store

LIMITS = EdgeLimits(max_request_bytes=2048, anonymous_max_bytes=256)
ALICE = principal()


class Edge:
    """What the app's middleware does before the view: the services, the verified caller."""

    def __init__(self, view: GraphQLView, svc: Services, who: Principal | None) -> None:
        self.view, self.svc, self.who = view, svc, who

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        scope.setdefault("state", {})["services"] = self.svc
        if self.who is not None:
            scope["user"] = AuthenticatedCaller(self.who)
        await self.view(scope, receive, send)


def client(
    tmp_path: Path, who: Principal | None = ALICE, cache: int = 0
) -> tuple[httpx.AsyncClient, RecordingExecutor, GraphQLView]:
    svc, recorder = services(Store(), tmp_path)
    view = GraphQLView(build_schema(extensions=[PreparedDocument]), LIMITS, cache)
    transport = httpx.ASGITransport(app=Edge(view, svc, who))
    return httpx.AsyncClient(transport=transport, base_url="http://test"), recorder, view


def refusal(response: httpx.Response) -> tuple[int, str, str]:
    [error] = response.json()["errors"]
    return response.status_code, error["extensions"]["code"], error["message"]


DOCUMENT = "query($id: ID!) { document(scope: USER, id: $id) { summary { id title } } }"


async def test_an_admitted_request_reaches_the_resolvers(tmp_path: Path) -> None:
    http, recorder, _ = client(tmp_path)
    async with http:
        got = await http.post("/graphql", json={"query": DOCUMENT, "variables": {"id": DOC}})
    assert got.status_code == 200
    assert got.json() == {"data": {"document": {"summary": {"id": DOC, "title": "Notes"}}}}
    assert [c.name for c in recorder.calls] == ["GET_DOCUMENT", "GET_DOCUMENT_CHUNKS"]


async def test_a_tenants_document_is_parsed_once_and_its_cost_checked_each_time(
    tmp_path: Path,
) -> None:
    http, recorder, view = client(tmp_path, cache=8)
    async with http:
        for _ in range(2):
            got = await http.post("/graphql", json={"query": DOCUMENT, "variables": {"id": DOC}})
            assert got.status_code == 200
    assert len(view.documents) == 1
    assert recorder.names().count("GET_DOCUMENT") == 2


@pytest.mark.parametrize(
    ("body", "headers", "status", "words"),
    [
        (b"{not json", {"content-type": "application/json"}, 400, "is not valid JSON"),
        (
            b'"just a string"',
            {"content-type": "application/json"},
            400,
            "a JSON object with a `query`",
        ),
        (
            b'{"query": "  "}',
            {"content-type": "application/json"},
            400,
            "no GraphQL `query` string",
        ),
        (
            b'{"query": "{ health }", "variables": []}',
            {"content-type": "application/json"},
            400,
            "`variables` must be an object",
        ),
        (
            b'{"query": "{ health }", "operationName": 1}',
            {"content-type": "application/json"},
            400,
            "`operationName` must be a string",
        ),
        (
            b'{"query": "{ health }", "x": "\\ud800"}',
            {"content-type": "application/json"},
            400,
            "lone UTF-16 surrogate",
        ),
        (
            b'{"query": "{ health }", "x": NaN}',
            {"content-type": "application/json"},
            400,
            "is not valid JSON",
        ),
        (
            b"query=%7B+health+%7D",
            {"content-type": "application/x-www-form-urlencoded"},
            400,
            "send JSON",
        ),
        (
            b'{"query": "' + b"x" * 3000 + b'"}',
            {"content-type": "application/json"},
            413,
            "over 2048 bytes",
        ),
    ],
)
async def test_a_malformed_request_is_refused_before_graphql(
    tmp_path: Path, body: bytes, headers: dict[str, str], status: int, words: str
) -> None:
    http, recorder, _ = client(tmp_path)
    async with http:
        got = await http.post("/graphql", content=body, headers=headers)
    code = "INVALID_ARGUMENT"
    assert refusal(got)[:2] == (status, code)
    assert words in refusal(got)[2]
    assert recorder.calls == []


async def test_without_a_token_only_health_in_a_small_body(tmp_path: Path) -> None:
    http, recorder, _ = client(tmp_path, who=None)
    async with http:
        health = await http.post("/graphql", json={"query": "{ health }"})
        data = await http.post("/graphql", json={"query": DOCUMENT, "variables": {"id": DOC}})
        big = await http.post("/graphql", json={"query": "{ health }", "pad": "x" * 300})
    assert health.json() == {"data": {"health": "ok"}}
    assert refusal(data)[:2] == (401, "UNAUTHENTICATED")
    assert refusal(big)[:2] == (401, "UNAUTHENTICATED")
    assert "at most 256 bytes" in refusal(big)[2]
    assert recorder.calls == []


async def test_a_declared_length_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    http, _, _ = client(tmp_path)
    async with http:
        got = await http.post(
            "/graphql",
            content=b'{"query": "{ health }"}',
            headers={"content-type": "application/json", "content-length": "999999"},
        )
    status, code, message = refusal(got)
    assert (status, code) == (413, "INVALID_ARGUMENT")
    assert "over 2048 bytes" in message
    assert got.json()["errors"][0]["extensions"]["limit"] == "maxRequestBytes"


async def test_an_invalid_document_is_answered_with_coded_errors(tmp_path: Path) -> None:
    http, recorder, _ = client(tmp_path)
    async with http:
        got = await http.post("/graphql", json={"query": "{ nosuchfield }"})
    body: dict[str, Any] = got.json()
    assert body["data"] is None
    assert [e["extensions"]["code"] for e in body["errors"]] == ["INVALID_ARGUMENT"]
    assert recorder.calls == []


async def test_a_mutation_over_get_is_refused_as_invalid(tmp_path: Path) -> None:
    http, recorder, _ = client(tmp_path)
    async with http:
        got = await http.get("/graphql", params={"query": "mutation { eraseMe { id } }"})
    status, code, message = refusal(got)
    assert (status, code) == (400, "INVALID_ARGUMENT")
    assert "mutation" in message.lower()
    assert recorder.calls == []
