"""Cursors and integers are parsed strictly at the door (issue 46, items 3 and 8): a forged or
out-of-range cursor is one INVALID_ARGUMENT through GraphQL and MCP alike, never INTERNAL, and
an MCP call with `true` for a revision or an argument the tool does not take changes nothing.
The door-by-door comparison of the same refusals is in door_refusals.py."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.conftest import Gql
from tests.integration.door_refusals import forged
from tests.integration.test_doors_agree import mcp_client

IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m)
  { summary { id } chunks { id text revision } } }"""
HISTORY = """query($id: ID!, $after: String) { documentHistory(scope: USER, id: $id, after: $after)
  { items { revision } cursor } }"""
FACTS = "query($after: String) { facts(scope: USER, after: $after) { hasMore } }"
NOTES = """query($after: String) { memoryHistory(scope: USER, key: "k", after: $after)
  { hasMore } }"""


@pytest.fixture(scope="module")
def who(token: Callable[..., str], tenant: str) -> str:
    return token(tenant, "strict-user", "strict-agent")


def _error(body: dict[str, Any]) -> dict[str, Any]:
    assert body.get("data") is None or not any(body["data"].values()), body
    [error] = body["errors"]
    found: dict[str, Any] = error
    return found


@pytest.mark.parametrize(
    ("query", "list_name", "position"),
    [
        (HISTORY, "documentHistory", [str(2**63)]),
        (HISTORY, "documentHistory", [str(2**64 + 1)]),
        (HISTORY, "documentHistory", ["1\u00b2"]),
        (HISTORY, "documentHistory", ["\u0662"]),
        (HISTORY, "documentHistory", [7]),
        (FACTS, "facts", [None, "9999-12-31T23:59:59-12:00", "0" * 32]),
        (FACTS, "facts", ["9999-12-31T23:30:00-01:00", "2020-01-01T00:00:00+00:00", "0" * 32]),
        (FACTS, "facts", [None, "0001-01-01T00:00:00+01:00", "0" * 32]),
        (NOTES, "memoryHistory", ["9999-12-31T23:59:59-00:01"]),
        (NOTES, "memoryHistory", ["2020-01-0\u00b2T00:00:00+00:00"]),
    ],
    ids=[
        "revision-2^63",
        "revision-past-64-bits",
        "revision-superscript",
        "revision-arabic-indic",
        "revision-number",
        "fact-created-past-9999",
        "fact-valid-past-9999",
        "fact-before-0001",
        "note-past-9999",
        "note-superscript",
    ],
)
def test_forged_cursors_get_one_message_through_graphql(
    gql: Gql, who: str, query: str, list_name: str, position: list[Any]
) -> None:
    doc = gql(IMPORT, who, m="# Strict\n\nOne paragraph.\n")["data"]["importDocument"]
    body = gql(query, who, id=doc["summary"]["id"], after=forged(list_name, *position))
    error = _error(body)
    assert error["extensions"]["code"] == "INVALID_ARGUMENT", body
    assert error["message"] == (
        f"after: not a cursor of {list_name}; pass the `cursor` of the previous page"
    )


async def test_mcp_refuses_true_as_a_revision_and_unknown_arguments_writing_nothing(
    live_server_url: str, gql: Gql, who: str
) -> None:
    doc = gql(IMPORT, who, m="# Fern\n\nWater it weekly.\n")["data"]["importDocument"]
    doc_id = doc["summary"]["id"]
    chunk = next(c for c in doc["chunks"] if c["text"].startswith("Water"))
    calls: list[tuple[str, dict[str, Any], list[str]]] = [
        ("restore_document", {"id": doc_id, "revision": True}, ["revision"]),
        ("chunk_update", {"id": chunk["id"], "text": "Dry.", "revision": True}, ["revision"]),
        ("chunk_update", {"id": chunk["id"], "text": "Dry.", "revision": 2**64}, ["revision"]),
        ("chunk_update", {"id": chunk["id"], "text": "Dry.", "revision": 2**63 - 1}, ["revision"]),
        (
            "chunk_update",
            {"id": chunk["id"], "text": "Dry.", "revision": chunk["revision"], "force": True},
            ["force"],
        ),
        ("document_history", {"id": doc_id, "after": forged("documentHistory", "\u00b2")}, []),
    ]
    async with mcp_client(live_server_url, who) as client:
        for tool, arguments, fields in calls:
            result = await client.call_tool(tool, arguments)
            assert result.is_error, (tool, arguments)
            assert result.structured_content is not None
            error = result.structured_content["error"]
            assert error["code"] == "INVALID_ARGUMENT", (tool, error)
            assert error.get("fields", []) == fields, (tool, error)
    history = gql(HISTORY, who, id=doc_id)["data"]["documentHistory"]["items"]
    assert [h["revision"] for h in history] == [1]
