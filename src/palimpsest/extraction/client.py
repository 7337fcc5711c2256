"""One model call over HTTP (httpx), with retries, a capped read and the key kept secret.

A call is retried with exponential back-off (honouring ``Retry-After``) on what may pass: a
timeout or refused connection, 408, 409, 429 and any 5xx (529: overloaded), and an answer
that is not a complete answer in the schema (a refusal, prose, truncated JSON, more bytes
than the cap). Other 4xx answers (a wrong key, an unknown model, a refused request) will
not heal by waiting: the call fails at once. After the last attempt ``ModelFailed`` says
why, in words that never hold the key, the request or the host's own error message.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

import httpx
from pydantic import SecretStr

from palimpsest.extraction import wire

log = logging.getLogger(__name__)
RETRIED_STATUS = frozenset({408, 409, 429})
BACKOFF_SECONDS = 1.0  # the first wait; doubled after each failed attempt, with jitter
MAX_WAIT_SECONDS = 30.0  # the longest wait between attempts, whatever Retry-After asks


class ModelFailed(Exception):
    """The model gave no usable answer; ``reason`` is safe to log and count."""

    def __init__(self, reason: str, attempts: int) -> None:
        super().__init__(f"{reason} (after {attempts} attempt(s))" if attempts else reason)
        self.reason = reason
        self.attempts = attempts


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


@dataclass(frozen=True, slots=True)
class Endpoint:
    """Where and how to call; ``repr`` never shows the key."""

    protocol: wire.Protocol
    url: str
    model: str
    api_key: SecretStr | None = None
    timeout_seconds: float = 30.0
    max_attempts: int = 3
    max_answer_bytes: int = 1024 * 1024
    max_output_tokens: int = 4096

    def __repr__(self) -> str:
        key = "set" if self.api_key else "none"
        return f"Endpoint({self.protocol.value}, {self.url!r}, {self.model!r}, key={key})"


class ModelClient:
    """Calls one endpoint. Each call opens its own connection pool and closes it, so a
    client holds nothing open between batches (a model call's latency dwarfs a connect)."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        backoff_seconds: float = BACKOFF_SECONDS,
    ) -> None:
        self.endpoint = endpoint
        self._transport = transport
        self._sleep = sleep
        self._backoff = backoff_seconds

    def __repr__(self) -> str:
        return f"ModelClient({self.endpoint!r})"

    async def call(
        self, system: str, user: str, schema: dict[str, Any], tool: wire.Tool = wire.EXTRACT
    ) -> wire.Answer:
        """The model's answer in the schema's shape, or ``ModelFailed``."""
        ep = self.endpoint
        request = wire.body(ep.protocol, ep.model, system, user, schema, ep.max_output_tokens, tool)
        timeout = httpx.Timeout(ep.timeout_seconds)
        async with httpx.AsyncClient(
            timeout=timeout, transport=self._transport, follow_redirects=False
        ) as http:
            return await self._attempts(http, request, tool)

    async def _attempts(
        self, http: httpx.AsyncClient, request: dict[str, Any], tool: wire.Tool
    ) -> wire.Answer:
        ep = self.endpoint
        reason = "no attempt"
        for attempt in range(1, ep.max_attempts + 1):
            try:
                return await self._attempt(http, request, tool)
            except _Retry as r:
                reason = r.reason
                if attempt == ep.max_attempts:
                    break
                wait = self._backoff * 2 ** (attempt - 1) * (1 + random.random() / 2)  # noqa: S311
                wait = min(MAX_WAIT_SECONDS, r.wait if r.wait is not None else wait)
                log.info("model call attempt %d failed (%s); retrying", attempt, reason)
                await self._sleep(wait)
            except ModelFailed as failed:
                raise ModelFailed(failed.reason, attempt) from None
        raise ModelFailed(reason, ep.max_attempts)

    async def _attempt(
        self, http: httpx.AsyncClient, request: dict[str, Any], tool: wire.Tool
    ) -> wire.Answer:
        ep = self.endpoint
        key = ep.api_key.get_secret_value() if ep.api_key else None
        try:
            async with http.stream(
                "POST",
                wire.endpoint(ep.protocol, ep.url),
                json=request,
                headers=wire.headers(ep.protocol, key),
            ) as response:
                raw = await _read_capped(response, ep.max_answer_bytes)
                status = response.status_code
                retry_after = response.headers.get("retry-after")
        except httpx.TimeoutException:
            raise _Retry("timeout") from None
        except httpx.TransportError as e:
            # The class only: a transport error's text may quote the URL and its query.
            raise _Retry(f"connection failed ({type(e).__name__})") from None
        if status == 200:
            try:
                return wire.answer(ep.protocol, raw, tool)
            except wire.BadAnswer as bad:
                raise _Retry(bad.reason) from None
        kind = wire.error_kind(raw)
        said = f"HTTP {status}" + (f" ({kind})" if kind else "")
        if status in RETRIED_STATUS or status >= 500:
            raise _Retry(said, _retry_after(retry_after))
        raise ModelFailed(said, 1)


async def _read_capped(response: httpx.Response, cap: int) -> bytes:
    """The body, or ``_Retry`` as soon as it passes ``cap`` bytes (read no further)."""
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap:
        raise _Retry(f"answer over {cap} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise _Retry(f"answer over {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _retry_after(value: str | None) -> float | None:
    """Seconds to wait, from delta-seconds or an HTTP date; None when absent or malformed."""
    if not value:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())
