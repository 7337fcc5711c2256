"""The client's retries against the real server's own limits: admission (503 UNAVAILABLE)
and the rate limit (429 with Retry-After); refusals are raised once, never retried; the
sealed bookmark of each answer rides on the next request."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterator

import httpx
import pytest

from palimpsest.client import BOOKMARK_HEADER, AsyncClient, Client, RetryPolicy, Scope
from palimpsest.config import Settings
from palimpsest.errors import Forbidden, InvalidArgument, QuotaExceeded, Unavailable
from palimpsest.server import serve_in_thread

# Long enough that embedding its chunks keeps the one slot busy while the others arrive.
MARKDOWN = "\n\n".join(f"Paragraph {i} about the lighthouse keeper's logbook." for i in range(40))


class Sent:
    """Every request the client put on the wire: when, and with which bookmark."""

    def __init__(self) -> None:
        self.at: list[float] = []
        self.bookmarks: list[str | None] = []

    def hook(self, request: httpx.Request) -> None:
        self.at.append(time.monotonic())
        self.bookmarks.append(request.headers.get(BOOKMARK_HEADER))

    async def ahook(self, request: httpx.Request) -> None:
        self.hook(request)


def fresh(token: Callable[..., str]) -> str:
    return str(token(f"t-{uuid.uuid4().hex[:10]}", "u", "a"))


@pytest.fixture(scope="module")
def admission_url(settings: Settings) -> Iterator[str]:
    one = settings.replace(max_in_flight_per_principal=1, max_waiting_per_principal=0)
    with serve_in_thread(one) as url:
        yield url


@pytest.fixture(scope="module")
def rate_limited_url(settings: Settings) -> Iterator[str]:
    with serve_in_thread(settings.replace(rate_limit_per_second=1.0, rate_limit_burst=1)) as url:
        yield url


async def imports(url: str, who: str, retry: RetryPolicy, sent: Sent) -> list[object]:
    http = httpx.AsyncClient(timeout=60, event_hooks={"request": [sent.ahook]})
    async with AsyncClient(url=url, token=who, retry=retry, http=http) as client:
        calls = [client.import_document(Scope.USER, MARKDOWN, path=f"/d{i}") for i in range(3)]
        return list(await asyncio.gather(*calls, return_exceptions=True))


def test_without_retries_the_admission_limit_refuses(
    admission_url: str, token: Callable[..., str]
) -> None:
    sent = Sent()
    answers = asyncio.run(imports(admission_url, fresh(token), RetryPolicy(tries=1), sent))
    refused = [a for a in answers if isinstance(a, Unavailable)]
    assert refused, answers
    assert refused[0].details["limit"] == "maxWaitingPerPrincipal"
    assert len(sent.at) == 3  # one try each


def test_the_client_retries_unavailable_until_admitted(
    admission_url: str, token: Callable[..., str]
) -> None:
    sent = Sent()
    answers = asyncio.run(imports(admission_url, fresh(token), RetryPolicy(), sent))
    assert [type(a).__name__ for a in answers] == ["Document"] * 3
    assert len(sent.at) > 3  # some were refused, and tried again


def test_the_client_honours_retry_after_of_the_rate_limit(
    rate_limited_url: str, token: Callable[..., str]
) -> None:
    sent = Sent()
    http = httpx.Client(timeout=30, event_hooks={"request": [sent.hook]})
    with Client(url=rate_limited_url, token=fresh(token), http=http) as client:
        for i in range(3):
            client.memory_set(Scope.USER, f"k{i}", i)
        assert [e.key for e in client.memories(Scope.USER).items] == ["k0", "k1", "k2"]
    assert len(sent.at) > 4  # 429s were answered, and tried again
    gaps = [b - a for a, b in zip(sent.at, sent.at[1:], strict=False)]
    retried = [g for g in gaps if g >= 0.9]
    assert len(retried) >= len(sent.at) - 4  # each retry waited out Retry-After: 1


def test_without_retries_the_rate_limit_raises_quota_exceeded(
    rate_limited_url: str, token: Callable[..., str]
) -> None:
    with Client(url=rate_limited_url, token=fresh(token), retry=RetryPolicy(tries=1)) as client:
        client.memory_set(Scope.USER, "k", 1)
        with pytest.raises(QuotaExceeded) as over:
            client.memory_set(Scope.USER, "k", 2)
    assert over.value.details["limit"] == "rateLimit"
    assert over.value.details["retryAfterSeconds"] >= 1


def test_a_refusal_is_raised_once_and_never_retried(
    live_server_url: str, token: Callable[..., str]
) -> None:
    sent = Sent()
    http = httpx.Client(timeout=30, event_hooks={"request": [sent.hook]})
    with (
        Client(url=live_server_url, token=fresh(token), http=http) as client,
        pytest.raises(Forbidden),
    ):
        client.memory_set(Scope.GLOBAL, "k", 1)
    assert len(sent.at) == 1


def test_each_answers_bookmark_rides_on_the_next_request(
    live_server_url: str, token: Callable[..., str]
) -> None:
    sent = Sent()
    http = httpx.Client(timeout=30, event_hooks={"request": [sent.hook]})
    with Client(url=live_server_url, token=fresh(token), http=http) as client:
        client.memory_set(Scope.USER, "k", "written")
        after_write = client.bookmark
        got = client.memory(Scope.USER, "k")
    assert got is not None
    assert got.value == "written"
    assert after_write is not None
    assert sent.bookmarks == [None, after_write]


def test_a_server_that_is_down_is_unavailable_after_bounded_tries() -> None:
    sent = Sent()
    http = httpx.Client(timeout=5, event_hooks={"request": [sent.hook]})
    policy = RetryPolicy(tries=3, backoff=0.01)
    with (
        Client(url="http://127.0.0.1:9", token="t", retry=policy, http=http) as client,
        pytest.raises(Unavailable, match="cannot reach"),
    ):
        client.health()
    assert len(sent.at) == 3


def test_a_bookmark_handed_to_a_client_of_another_replica_reads_the_write(
    settings: Settings, live_server_url: str, token: Callable[..., str]
) -> None:
    who = fresh(token)
    with serve_in_thread(settings) as replica:
        with Client(url=live_server_url, token=who) as on_a:
            on_a.memory_set(Scope.USER, "k", "written on A")
            sealed = on_a.bookmark
        assert sealed is not None
        with Client(url=replica, token=who, bookmark=sealed) as on_b:
            got = on_b.memory(Scope.USER, "k")
            assert got is not None
            assert got.value == "written on A"
        tampered = sealed[:-3] + ("AAA" if not sealed.endswith("AAA") else "BBB")
        sent = Sent()
        http = httpx.Client(timeout=30, event_hooks={"request": [sent.hook]})
        with (
            Client(url=replica, token=who, bookmark=tampered, http=http) as forged,
            pytest.raises(InvalidArgument),
        ):
            forged.memory(Scope.USER, "k")
        assert len(sent.at) == 1  # a refused bookmark is not retried
