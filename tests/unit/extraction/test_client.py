"""One model call against a local host speaking each protocol's wire format: the answer read
from a structured output or a forced tool call, and every failure retried or refused as it
should be, with the key never in an error, a log line or a repr."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from palimpsest.extraction import candidates
from palimpsest.extraction.client import Endpoint, ModelClient, ModelFailed
from palimpsest.extraction.wire import Protocol
from tests.model_host import (
    ModelHost,
    Reply,
    anthropic_error,
    chat_completion,
    facts_answer,
    message_text,
    message_tool_use,
    model_host,
    openai_error,
)

KEY = "sk-local-test-key-0123456789abcdef"
ANSWER = facts_answer()


@pytest.fixture
def host() -> Iterator[ModelHost]:
    with model_host() as h:
        yield h


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def client(
    host: ModelHost, protocol: Protocol, sleeps: Sleeps | None = None, **changes: object
) -> ModelClient:
    base = host.url + ("/v1" if protocol is Protocol.OPENAI else "")
    fields: dict[str, object] = {"timeout_seconds": 5.0, "max_attempts": 3, **changes}
    endpoint = Endpoint(protocol, base, "local-model", SecretStr(KEY), **fields)  # type: ignore[arg-type]
    return ModelClient(endpoint, sleep=sleeps or Sleeps(), backoff_seconds=0.5)


async def call(c: ModelClient) -> object:
    return await c.call("system words", "user words", candidates.SCHEMA)


async def test_openai_structured_output_is_read_with_its_token_counts(host: ModelHost) -> None:
    host.replies.append(chat_completion({"facts": []}, usage=(812, 64)))
    answer = await call(client(host, Protocol.OPENAI))
    assert answer.payload == {"facts": []}  # type: ignore[attr-defined]
    assert (answer.tokens_in, answer.tokens_out) == (812, 64)  # type: ignore[attr-defined]
    [seen] = host.seen
    assert seen.path == "/v1/chat/completions"
    assert seen.headers["authorization"] == f"Bearer {KEY}"
    assert seen.body["model"] == "local-model"
    assert seen.body["response_format"]["type"] == "json_schema"
    assert seen.body["response_format"]["json_schema"]["strict"] is True
    assert seen.body["response_format"]["json_schema"]["schema"] == candidates.SCHEMA
    assert [m["role"] for m in seen.body["messages"]] == ["system", "user"]
    assert "tools" not in seen.body  # one tool-less call


async def test_anthropic_forced_tool_call_is_read_with_its_token_counts(host: ModelHost) -> None:
    host.replies.append(message_tool_use({"facts": []}, usage=(900, 70)))
    answer = await call(client(host, Protocol.ANTHROPIC))
    assert answer.payload == {"facts": []}  # type: ignore[attr-defined]
    assert (answer.tokens_in, answer.tokens_out) == (900, 70)  # type: ignore[attr-defined]
    [seen] = host.seen
    assert seen.path == "/v1/messages"
    assert seen.headers["x-api-key"] == KEY
    assert seen.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in seen.headers
    assert seen.body["tool_choice"] == {"type": "tool", "name": "record_facts"}
    assert seen.body["tools"][0]["input_schema"] == candidates.SCHEMA
    assert seen.body["system"] == "system words"


async def test_429_waits_as_retry_after_says_then_succeeds(host: ModelHost) -> None:
    sleeps = Sleeps()
    host.replies.append(openai_error(429, "requests", "Rate limit reached", **{"retry-after": "7"}))
    host.replies.append(chat_completion(ANSWER))
    await call(client(host, Protocol.OPENAI, sleeps))
    assert sleeps.waits == [7.0]
    assert len(host.seen) == 2


async def test_anthropic_overloaded_529_and_500_are_retried_with_backoff(host: ModelHost) -> None:
    sleeps = Sleeps()
    host.replies.append(anthropic_error(529, "overloaded_error", "Overloaded"))
    host.replies.append(anthropic_error(500, "api_error", "Internal server error"))
    host.replies.append(message_tool_use(ANSWER))
    await call(client(host, Protocol.ANTHROPIC, sleeps))
    assert len(sleeps.waits) == 2
    assert 0.5 <= sleeps.waits[0] <= 0.75  # the first wait, jittered
    assert 1.0 <= sleeps.waits[1] <= 1.5  # doubled


async def test_a_wrong_key_fails_at_once_without_the_key_or_the_hosts_message(
    host: ModelHost, caplog: pytest.LogCaptureFixture
) -> None:
    # A real host echoes part of the key it was sent: its message is never repeated.
    said = f"Incorrect API key provided: {KEY[:8]}***{KEY[-4:]}"
    host.replies.append(openai_error(401, "invalid_request_error", said))
    caplog.set_level(logging.DEBUG)
    c = client(host, Protocol.OPENAI)
    with pytest.raises(ModelFailed) as failed:
        await call(c)
    assert len(host.seen) == 1  # not retried: waiting does not mend a key
    assert "HTTP 401" in str(failed.value)
    for text in (str(failed.value), caplog.text, repr(c), repr(c.endpoint)):
        assert KEY not in text
        assert KEY[:8] not in text
        assert "Incorrect" not in text


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (chat_completion("I found two facts: Alice lives in Berlin."), "prose"),
        (chat_completion('{"facts": [{"turn": "t1", "quo'), "truncated"),
        (chat_completion('{"facts": [{"turn": "t1"', finish_reason="length"), "truncated"),
        (chat_completion(ANSWER, refusal="I can't help with that."), "refusal"),
        (chat_completion("[1, 2]"), "not a JSON object"),
    ],
)
async def test_openai_unusable_answers_are_retried_then_fail(
    host: ModelHost, reply: Reply, reason: str
) -> None:
    host.answer = lambda _: reply
    with pytest.raises(ModelFailed) as failed:
        await call(client(host, Protocol.OPENAI))
    assert reason in failed.value.reason
    assert len(host.seen) == 3


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (message_text("Alice lives in Berlin."), "prose"),
        (message_tool_use({"facts": []}, stop_reason="max_tokens"), "truncated"),
        (message_text("", stop_reason="refusal"), "refusal"),
    ],
)
async def test_anthropic_unusable_answers_are_retried_then_fail(
    host: ModelHost, reply: Reply, reason: str
) -> None:
    host.answer = lambda _: reply
    with pytest.raises(ModelFailed) as failed:
        await call(client(host, Protocol.ANTHROPIC))
    assert reason in failed.value.reason
    assert len(host.seen) == 3


async def test_an_answer_over_the_byte_cap_is_not_read_whole(host: ModelHost) -> None:
    big = chat_completion({"facts": [], "pad": "x" * (10 * 1024 * 1024)})
    host.answer = lambda _: big
    with pytest.raises(ModelFailed) as failed:
        await call(client(host, Protocol.OPENAI, max_answer_bytes=64 * 1024, max_attempts=2))
    assert "over 65536 bytes" in failed.value.reason


async def test_an_answer_over_the_cap_without_a_length_is_cut_while_read() -> None:
    from palimpsest.extraction.client import _read_capped, _Retry

    class Streamed:
        def __init__(self) -> None:
            self.headers: dict[str, str] = {}
            self.read = 0

        async def aiter_bytes(self) -> object:
            for _ in range(1000):
                self.read += 1
                yield b"x" * 4096

    body = Streamed()
    with pytest.raises(_Retry):
        await _read_capped(body, 64 * 1024)  # type: ignore[arg-type]
    assert body.read == 17  # stopped at the first chunk past the cap


async def test_a_host_that_does_not_answer_in_time_is_retried_then_fails(host: ModelHost) -> None:
    host.answer = lambda _: Reply(200, b"{}", delay=1.0)
    with pytest.raises(ModelFailed) as failed:
        await call(client(host, Protocol.OPENAI, timeout_seconds=0.2, max_attempts=2))
    assert failed.value.reason == "timeout"
    assert failed.value.attempts == 2


async def test_a_url_that_does_not_answer_fails_as_a_connection_failure() -> None:
    endpoint = Endpoint(Protocol.OPENAI, "http://127.0.0.1:9", "m", SecretStr(KEY), 1.0, 2)
    c = ModelClient(endpoint, sleep=Sleeps())
    with pytest.raises(ModelFailed) as failed:
        await call(c)
    assert failed.value.reason.startswith("connection failed")
    assert KEY not in str(failed.value)


def test_retry_after_reads_seconds_and_http_dates() -> None:
    from palimpsest.extraction.client import _retry_after

    assert _retry_after("12") == 12.0
    assert _retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past
    assert _retry_after("soon") is None
    assert _retry_after(None) is None
