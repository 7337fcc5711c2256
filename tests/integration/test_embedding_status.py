"""``embeddingStatus`` on the shared server: the platform operator reads the models and the
vectors per plane; anyone else, a tenant admin included, is refused and learns nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from palimpsest.config import Settings
from palimpsest.identity import Scope
from tests.integration.conftest import Gql

STATUS = """query { embeddingStatus { state active { model dimensions slot }
  target { model } old { model } planes { plane active target missing old } } }"""


def test_the_operator_reads_the_models_and_counts(
    gql: Gql, token: Callable[..., str], tenant: str, settings: Settings
) -> None:
    body = gql(STATUS, token(tenant, "op", operator=True))
    assert "errors" not in body, body
    status = body["data"]["embeddingStatus"]
    assert status["active"]["model"] == settings.embedding.model
    assert status["active"]["dimensions"] == settings.embedding.dimensions
    assert status["state"] == "steady"
    assert status["target"] is None
    assert status["old"] is None
    planes = {p["plane"]: p for p in status["planes"]}
    assert set(planes) == {
        "notes",
        "noteVersions",
        "chunks",
        "chunkVersions",
        "facts",
        "passages",
    }
    assert all(p["missing"] == p["target"] == p["old"] == 0 for p in planes.values())


@pytest.mark.parametrize("role", ["member", "admin"])
def test_anyone_but_the_operator_is_refused(
    gql: Gql, token: Callable[..., str], tenant: str, role: str
) -> None:
    body = gql(STATUS, token(tenant, "u1", admin=role == "admin"))
    assert body["data"] is None
    [error] = body["errors"]
    assert error["extensions"]["code"] == "FORBIDDEN"
    assert "embedding" in error["message"]


@pytest.mark.parametrize(
    "grant",
    [{"isolated": True}, {"memory_scopes": [Scope.USER]}, {"memory_scopes": [Scope.TENANT]}],
    ids=["isolated", "user-only", "tenant-only"],
)
def test_an_operator_token_without_global_is_refused_like_any_global_read(
    gql: Gql, token: Callable[..., str], tenant: str, grant: dict[str, Any]
) -> None:
    # Platform-wide counts are a GLOBAL read: an isolated operator, or one whose token grants
    # less than GLOBAL, is refused them as it is refused `recall(scope: GLOBAL)`.
    who = token(tenant, "op", operator=True, **grant)
    body = gql(STATUS, who)
    assert body["data"] is None, body
    [error] = body["errors"]
    assert error["extensions"]["code"] == "FORBIDDEN"
    recall = gql('{ recall(scope: GLOBAL, query: "x") { scopes } }', who)
    assert recall["errors"][0]["extensions"]["code"] == "FORBIDDEN"
