"""Readiness (``GET /readyz``): start-up's warm-up is done (``warmup.py``; until then 503
``warming``) and every configured backend answers, or the answer names the one that did not.

Neo4j always; SQL Memory's backend as configured (PostgreSQL is a server of its own; SQLite's
directory must be writable). Each check is bounded, and a failure is reported by backend name
and error code only: never a message that could carry a DSN, a host or a secret.

Beside the backends, ``consolidators`` says how many consolidator workers this process runs
(``PALIMPSEST_SERVE_CONSOLIDATORS``) and how old the oldest span waiting on the harvest queue
is (all tenants': one figure, no tenant named; counted at most once a second). Neither
makes the server unready: another process may run the workers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from palimpsest.errors import ErrorCode, PalimpsestError
from palimpsest.jobs.queue_metrics import QueueGauges
from palimpsest.resolvers.services import Services

log = logging.getLogger("palimpsest.readiness")

CHECK_SECONDS = 5.0
QUEUE_COUNT_SECONDS = 1.0  # /readyz may be asked often: the queue is counted at most this often
TIMEOUT = "TIMEOUT"


@dataclass(frozen=True, slots=True)
class BackendCheck:
    backend: str
    code: str | None  # None: the backend answered

    @property
    def ok(self) -> bool:
        return self.code is None

    def wire(self) -> dict[str, str]:
        return {"status": "ok"} if self.code is None else {"status": "down", "code": self.code}


async def _check(backend: str, ping: Callable[[], Awaitable[None]]) -> BackendCheck:
    try:
        await asyncio.wait_for(ping(), CHECK_SECONDS)
    except TimeoutError:
        code: str | None = TIMEOUT
    except PalimpsestError as e:
        code = e.code.value
    except Exception:  # an unexpected failure is still a failure of this backend
        code = ErrorCode.UNAVAILABLE.value
    else:
        code = None
    if code is not None:
        log.warning("readiness: %s failed (%s)", backend, code)
    return BackendCheck(backend, code)


async def check(services: Services) -> list[BackendCheck]:
    """Every configured backend, checked at once."""
    checks = [
        _check("neo4j", services.db.ping),
        _check(services.settings.sql.backend, services.sql.ping),
    ]
    return list(await asyncio.gather(*checks))


def report(checks: list[BackendCheck], model: str) -> tuple[dict[str, object], int]:
    """The JSON body and status: 200 ``ready`` or 503 ``unavailable`` naming the failed ones."""
    failed = [c.backend for c in checks if not c.ok]
    body: dict[str, object] = {
        "status": "unavailable" if failed else "ready",
        "backends": {c.backend: c.wire() for c in checks},
    }
    if failed:
        body["failed"] = failed
        return body, 503
    body["model"] = model
    return body, 200


def warming(warmup: dict[str, object]) -> tuple[dict[str, object], int]:
    """503 while start-up's warm-up runs (``warming``, with the steps left) or after it failed
    (``unavailable``, naming the step): a balancer sends no traffic yet."""
    status = "unavailable" if warmup.get("status") == "failed" else "warming"
    return {"status": status, "warmup": warmup}, 503


async def consolidators(services: Services, queue: QueueGauges) -> dict[str, object]:
    """``{"workers": n, "oldestQueuedSeconds": age or null}``; the age is null too when the
    queue could not be counted in time (the backends' checks say why)."""
    try:
        figures = await asyncio.wait_for(queue.refresh(services), CHECK_SECONDS)
    except TimeoutError:
        figures = None
    oldest = None if figures is None else figures.oldest_queued_seconds
    return {
        "workers": services.wake.workers,
        "oldestQueuedSeconds": None if oldest is None else round(oldest, 3),
    }
