"""The client's transport: one set of rules (``Rules``), two flavours over httpx.

The rules are free of I/O so the sync and the async transport cannot disagree. They carry the
token; keep the server's sealed ``X-Palimpsest-Bookmark`` from each response and send it on the
next request (read-your-writes); retry what the server says may be retried, honouring
``Retry-After``, a bounded number of times; and raise every refusal as the error tree's class
of its code. What is retried, and why it is safe:

- HTTP ``429`` (the rate limit): answered before anything ran.
- ``UNAVAILABLE`` (admission's ``503``, a stopped request whose write rolled back, a database
  that is briefly away): nothing was committed.
- a connection that could not be made: the request never left.

Nothing else is retried: a refusal (``FORBIDDEN``, ``INVALID_ARGUMENT``, ``QUOTA_EXCEEDED``
of a stored quota, ...) is raised at once, and so is a timeout while a response was awaited
(a write may have happened).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from palimpsest.errors import (
    Conflict,
    DatabaseFailure,
    ErrorCode,
    Forbidden,
    InvalidArgument,
    NotFound,
    PalimpsestError,
    QuotaExceeded,
    Unauthenticated,
    Unavailable,
)

BOOKMARK_HEADER = "X-Palimpsest-Bookmark"
_SECONDS = re.compile(r"[0-9]{1,10}")  # ASCII delta-seconds; more digits is no sane wait
ERRORS: Mapping[str, type[PalimpsestError]] = {
    ErrorCode.UNAUTHENTICATED: Unauthenticated,
    ErrorCode.FORBIDDEN: Forbidden,
    ErrorCode.NOT_FOUND: NotFound,
    ErrorCode.INVALID_ARGUMENT: InvalidArgument,
    ErrorCode.CONFLICT: Conflict,
    ErrorCode.QUOTA_EXCEEDED: QuotaExceeded,
    ErrorCode.UNAVAILABLE: Unavailable,
    ErrorCode.INTERNAL: DatabaseFailure,
}


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """``tries`` attempts in all (1: never retry). A wait is the server's ``Retry-After``,
    else ``backoff`` doubled per attempt; a server asking for longer than ``max_wait``
    seconds is not waited for (its error is raised, with ``retryAfterSeconds``)."""

    tries: int = 4
    backoff: float = 0.25
    max_wait: float = 30.0

    def __post_init__(self) -> None:
        if self.tries < 1 or self.backoff < 0 or self.max_wait < 0:
            raise ValueError("RetryPolicy: tries >= 1, backoff >= 0, max_wait >= 0")


@dataclass(frozen=True, slots=True)
class Retry:
    """Try again after ``wait`` seconds; ``error`` is raised if no try is left."""

    wait: float
    error: PalimpsestError


def error_from(payload: Mapping[str, Any]) -> PalimpsestError:
    """One GraphQL error as the error tree's class of its ``extensions.code``."""
    extensions = dict(payload.get("extensions") or {})
    code = str(extensions.pop("code", ErrorCode.INTERNAL))
    message = str(payload.get("message") or code)
    if "path" in payload:
        extensions.setdefault("path", payload["path"])
    return ERRORS.get(code, DatabaseFailure)(message, **extensions)


def retry_after(value: str | None, now: float) -> float | None:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date; None when absent or bad
    (the policy's backoff applies then): a header is the server's hint, never a failure."""
    if not value:
        return None
    value = value.strip()
    if _SECONDS.fullmatch(value):
        return float(value)
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - now)
    except (TypeError, ValueError, OverflowError, IndexError):
        return None


@dataclass(slots=True)
class Rules:
    """What a request carries and what an answer means. The bookmark is the one state."""

    token: str | None
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    bookmark: str | None = None

    def headers(self) -> dict[str, str]:
        out = {"Accept": "application/json"}
        if self.token:
            out["Authorization"] = f"Bearer {self.token}"
        if self.bookmark:
            out[BOOKMARK_HEADER] = self.bookmark
        return out

    def settle(self, response: httpx.Response, attempt: int) -> dict[str, Any] | Retry:
        """The ``data`` of a response, a ``Retry``, or raise its error."""
        if sealed := response.headers.get(BOOKMARK_HEADER):
            self.bookmark = sealed
        try:
            body = response.json()
        except ValueError:
            body = None
        errors = body.get("errors") if isinstance(body, dict) else None
        if response.is_redirect or 300 <= response.status_code < 400:
            # The client follows no redirect (the token stays with the URL it was given), so
            # a 3xx is never the answer, whatever its body says.
            error = self._status_error(response)
        elif errors:
            error = error_from(errors[0])
        elif response.status_code >= 400 or not isinstance(body, dict):
            error = self._status_error(response)
        else:
            data = body.get("data")
            return data if isinstance(data, dict) else {}
        retriable = response.status_code == 429 or error.code == ErrorCode.UNAVAILABLE
        if not retriable:
            raise error
        asked = retry_after(response.headers.get("Retry-After"), time.time())
        return self.retry(attempt, error, asked)

    def retry(self, attempt: int, error: PalimpsestError, asked: float | None) -> Retry:
        """Wait before try ``attempt + 1``, or raise ``error`` when none is left."""
        wait = self.policy.backoff * 2**attempt if asked is None else asked
        if attempt + 1 >= self.policy.tries or wait > self.policy.max_wait:
            raise error
        return Retry(wait, error)

    def unreachable(self, url: str, attempt: int, e: httpx.TransportError) -> Retry:
        error = Unavailable(f"cannot reach the Palimpsest server at {url}: {type(e).__name__}")
        if not isinstance(e, httpx.ConnectError):
            raise error from e  # the request may have run: never resend it
        return self.retry(attempt, error, None)

    @staticmethod
    def _status_error(response: httpx.Response) -> PalimpsestError:
        status = response.status_code
        if status in (502, 503, 504):
            return Unavailable(f"the server answered HTTP {status}", status=status)
        if status == 401:
            return Unauthenticated("the server refused the token (HTTP 401)")
        if 300 <= status < 400:
            return DatabaseFailure(
                f"the server answered a redirect (HTTP {status}), which the client does not "
                "follow: give it the server's own URL",
                status=status,
            )
        return DatabaseFailure(f"unexpected answer: HTTP {status}", status=status)


def body_of(document: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    return {"query": document, "variables": dict(variables)}


class Transport:
    """Posts GraphQL over a blocking ``httpx.Client``."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        policy: RetryPolicy | None = None,
        timeout: float = 30.0,
        http: httpx.Client | None = None,
    ) -> None:
        self.endpoint = url.rstrip("/") + "/graphql"
        self.rules = Rules(token, policy or RetryPolicy())
        self.http = http or httpx.Client(timeout=timeout)

    def post(self, document: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        attempt = 0
        while True:
            try:
                response = self.http.post(
                    self.endpoint, json=body_of(document, variables), headers=self.rules.headers()
                )
                outcome = self.rules.settle(response, attempt)
            except httpx.TransportError as e:
                outcome = self.rules.unreachable(self.endpoint, attempt, e)
            if not isinstance(outcome, Retry):
                return outcome
            time.sleep(outcome.wait)
            attempt += 1

    def close(self) -> None:
        self.http.close()


async def _sleep(seconds: float) -> None:
    # asyncio is imported here, not at the top: the blocking client (the CLI's quick looks)
    # never needs it, and it is a tenth of the client's import time.
    import asyncio

    await asyncio.sleep(seconds)


class AsyncTransport:
    """Posts GraphQL over an ``httpx.AsyncClient``; the same rules as ``Transport``."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        policy: RetryPolicy | None = None,
        timeout: float = 30.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.endpoint = url.rstrip("/") + "/graphql"
        self.rules = Rules(token, policy or RetryPolicy())
        self.http = http or httpx.AsyncClient(timeout=timeout)

    async def post(self, document: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        attempt = 0
        while True:
            try:
                response = await self.http.post(
                    self.endpoint, json=body_of(document, variables), headers=self.rules.headers()
                )
                outcome = self.rules.settle(response, attempt)
            except httpx.TransportError as e:
                outcome = self.rules.unreachable(self.endpoint, attempt, e)
            if not isinstance(outcome, Retry):
                return outcome
            await _sleep(outcome.wait)
            attempt += 1

    async def aclose(self) -> None:
        await self.http.aclose()
