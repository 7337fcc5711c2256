"""Per-principal rate limits over HTTP: 429 with Retry-After, per principal, then recovery."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterator

import httpx
import pytest

from palimpsest.config import Settings
from palimpsest.server import serve_in_thread

ME = {"query": "{ me { tenant } }"}


@pytest.fixture(scope="module")
def limited(settings: Settings) -> Iterator[httpx.Client]:
    tight = settings.replace(rate_limit_per_second=1.0, rate_limit_burst=3)
    with serve_in_thread(tight) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield client


def _ask(client: httpx.Client, token: str) -> httpx.Response:
    return client.post("/graphql", json=ME, headers={"Authorization": f"Bearer {token}"})


def test_over_the_burst_is_429_with_retry_after(
    limited: httpx.Client, token: Callable[..., str]
) -> None:
    tenant = f"t-{uuid.uuid4().hex[:10]}"
    alice = token(tenant, "alice", "planner")
    assert [_ask(limited, alice).status_code for _ in range(3)] == [200, 200, 200]
    refused = _ask(limited, alice)
    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    [error] = refused.json()["errors"]
    assert error["extensions"]["code"] == "QUOTA_EXCEEDED"
    assert error["extensions"]["limit"] == "rateLimit"
    assert "data" not in refused.json()

    # Another principal (another user, or the same user with another agent) is not slowed.
    assert _ask(limited, token(tenant, "bob", "planner")).status_code == 200
    assert _ask(limited, token(tenant, "alice", "critic")).status_code == 200
    # The same principal with a fresh token shares the bucket: the key is who, not which token.
    assert _ask(limited, token(tenant, "alice", "planner")).status_code == 429

    time.sleep(int(refused.headers["retry-after"]))
    assert _ask(limited, alice).status_code == 200


def test_requests_without_a_principal_are_not_counted(limited: httpx.Client) -> None:
    for _ in range(5):
        assert limited.get("/healthz").status_code == 200
    assert limited.post("/graphql", json={"query": "{ health }"}).status_code == 200
