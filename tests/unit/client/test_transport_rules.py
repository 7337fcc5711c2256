"""The transport's rules without a server: what is retried, how long it waits, what is raised."""

from __future__ import annotations

from email.utils import formatdate

import httpx
import pytest

from palimpsest.client.transport import (
    BOOKMARK_HEADER,
    AsyncTransport,
    Retry,
    RetryPolicy,
    Rules,
    Transport,
    retry_after,
)
from palimpsest.errors import (
    Conflict,
    DatabaseFailure,
    ErrorCode,
    Forbidden,
    QuotaExceeded,
    Unavailable,
)


def answer(status: int, body: object = None, **headers: str) -> httpx.Response:
    if body is None:
        return httpx.Response(status, content=b"<html>bad gateway</html>", headers=headers)
    return httpx.Response(status, json=body, headers=headers)


def error(code: str, **extensions: object) -> dict[str, object]:
    return {"errors": [{"message": f"{code} here", "extensions": {"code": code, **extensions}}]}


def test_data_is_returned_and_the_bookmark_kept() -> None:
    rules = Rules("tok")
    got = rules.settle(answer(200, {"data": {"x": 1}}, **{BOOKMARK_HEADER: "v1.abc"}), 0)
    assert got == {"x": 1}
    assert rules.headers()[BOOKMARK_HEADER] == "v1.abc"
    assert rules.headers()["Authorization"] == "Bearer tok"


@pytest.mark.parametrize(
    ("code", "kind"),
    [("FORBIDDEN", Forbidden), ("CONFLICT", Conflict), ("QUOTA_EXCEEDED", QuotaExceeded)],
)
def test_a_refusal_raises_its_class_at_once(code: str, kind: type[Exception]) -> None:
    with pytest.raises(kind) as raised:
        Rules("t").settle(answer(200, error(code, limit="x")), 0)
    assert str(raised.value) == f"{code} here"
    assert getattr(raised.value, "details") == {"limit": "x"}  # noqa: B009


def test_an_unknown_code_is_internal() -> None:
    with pytest.raises(DatabaseFailure):
        Rules("t").settle(answer(200, error("SOMETHING_NEW")), 0)


def test_unavailable_and_429_are_retried_after_what_the_server_asks() -> None:
    rules = Rules("t")
    busy = rules.settle(answer(503, error("UNAVAILABLE"), **{"Retry-After": "2"}), 0)
    assert isinstance(busy, Retry)
    assert busy.wait == 2.0
    limited = rules.settle(answer(429, error("QUOTA_EXCEEDED"), **{"Retry-After": "1"}), 0)
    assert isinstance(limited, Retry)
    assert limited.error.code == ErrorCode.QUOTA_EXCEEDED


def test_without_retry_after_the_wait_backs_off() -> None:
    rules = Rules("t", RetryPolicy(tries=5, backoff=0.5))
    waits = [rules.settle(answer(502), n) for n in range(4)]
    assert [w.wait for w in waits if isinstance(w, Retry)] == [0.5, 1.0, 2.0, 4.0]


def test_tries_are_bounded() -> None:
    rules = Rules("t", RetryPolicy(tries=2))
    assert isinstance(rules.settle(answer(503, error("UNAVAILABLE")), 0), Retry)
    with pytest.raises(Unavailable):
        rules.settle(answer(503, error("UNAVAILABLE")), 1)


def test_a_wait_longer_than_max_wait_is_raised_not_slept() -> None:
    rules = Rules("t", RetryPolicy(max_wait=5))
    with pytest.raises(QuotaExceeded):
        rules.settle(answer(429, error("QUOTA_EXCEEDED"), **{"Retry-After": "60"}), 0)


def test_retry_after_as_an_http_date() -> None:
    assert retry_after(formatdate(1000.0 + 30, usegmt=True), now=1000.0) == pytest.approx(30)
    assert retry_after("soon", now=0) is None


def test_a_bad_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="tries"):
        RetryPolicy(tries=0)


@pytest.mark.parametrize(
    "value", ["\u00b2", "1\u00b2", "\u0663", "9" * 400, "-1", "1.5", "Mon, 99 Foo 2020", "Fri,"]
)
def test_a_malformed_retry_after_is_tolerated_as_absent(value: str) -> None:
    assert retry_after(value, 0.0) is None
    # As the bytes a server sends: httpx decodes them for the header's str.
    headers = [(b"Retry-After", value.encode())]
    busy = Rules("t").settle(httpx.Response(503, json=error("UNAVAILABLE"), headers=headers), 0)
    assert isinstance(busy, Retry)
    assert busy.wait == RetryPolicy().backoff


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308, 300, 304])
def test_a_redirect_is_an_error_even_with_a_json_answer(status: int) -> None:
    response = answer(status, {"data": {"x": 1}}, Location="https://elsewhere.invalid/graphql")
    with pytest.raises(DatabaseFailure, match=f"HTTP {status}") as raised:
        Rules("t").settle(response, 0)
    assert raised.value.details == {"status": status}
    with pytest.raises(DatabaseFailure, match="redirect"):
        Rules("t").settle(answer(status, error("FORBIDDEN")), 0)


def _replies(*responses: httpx.Response) -> httpx.MockTransport:
    queue = list(responses)
    return httpx.MockTransport(lambda _: queue.pop(0))


def _flaky() -> tuple[httpx.Response, httpx.Response]:
    busy = httpx.Response(503, json=error("UNAVAILABLE"), headers=[(b"Retry-After", "²".encode())])
    return busy, httpx.Response(200, json={"data": {"x": 1}})


async def test_both_flavours_retry_past_a_malformed_retry_after_and_refuse_a_redirect() -> None:
    policy = RetryPolicy(backoff=0)

    def moved() -> httpx.Response:
        return httpx.Response(302, json={"data": {"x": 2}}, headers={"Location": "/elsewhere"})

    sync = Transport(
        "http://s", "t", policy=policy, http=httpx.Client(transport=_replies(*_flaky()))
    )
    assert sync.post("{ x }", {}) == {"x": 1}
    sync = Transport("http://s", "t", policy=policy, http=httpx.Client(transport=_replies(moved())))
    with pytest.raises(DatabaseFailure, match="redirect"):
        sync.post("{ x }", {})
    flaky = httpx.AsyncClient(transport=_replies(*_flaky()))
    assert await AsyncTransport("http://s", "t", policy=policy, http=flaky).post("{ x }", {}) == {
        "x": 1
    }
    redirected = httpx.AsyncClient(transport=_replies(moved()))
    with pytest.raises(DatabaseFailure, match="redirect"):
        await AsyncTransport("http://s", "t", policy=policy, http=redirected).post("{ x }", {})
