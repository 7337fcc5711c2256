"""``embeddingStatus`` on the shared server: the platform operator reads the models and the
vectors per plane; anyone else, a tenant admin included, is refused and learns nothing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from palimpsest.config import Settings
from tests.integration.conftest import Gql

pytestmark = pytest.mark.integration

STATUS = """query { embeddingStatus { state active { model dimensions slot }
  target { model } old { model } planes { plane active target missing old } } }"""


def test_the_operator_reads_the_models_and_counts(
    gql: Gql, token: Callable[..., str], tenant: str, settings: Settings
) -> None:
    body = gql(STATUS, token(tenant, "op", operator=True))
    assert "errors" not in body, body
    status = body["data"]["embeddingStatus"]
    assert status["active"]["model"] == settings.embedding_model
    assert status["active"]["dimensions"] == settings.embedding_dimensions
    assert status["state"] == "steady"
    assert status["target"] is None
    assert status["old"] is None
    planes = {p["plane"]: p for p in status["planes"]}
    assert set(planes) == {"notes", "noteVersions", "chunks", "chunkVersions", "facts"}
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
