"""Consolidation under crashes (issue 8): killed workers lose and duplicate nothing.

Spans are harvested (through the ``harvest`` resolver) for a few users and sessions of a
fresh tenant; ``workers`` real ``palimpsest consolidate`` processes drain the queue while the
harness, ``kills`` times, waits until a worker holds a lease and kills it with SIGKILL, then
starts a new one. When the tenant's queue is empty the survivors are stopped and the tenant is
audited from the database: ``accepted`` spans harvested, ``consolidated`` spans done with
exactly one turn chunk, ``lost`` spans neither done with their chunk nor dead, ``duplicated``
turn chunks beyond one per span, ``dead_letter``, and ``chain_errors``: conversations whose
NEXT edges are not one chain over their turns.

``tests/integration/test_consolidate_crash.py`` runs it small; ``palimpsest bench
consolidate-crash`` large. The tenant is erased afterwards unless ``keep``.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import CrossScopeStatement, Statement
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.identity.tokens import principal_from_claims
from palimpsest.resolvers.cycle import harvesting as hv
from palimpsest.resolvers.cycle.harvesting import STATUS_PARAMS
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services

Progress = Callable[[str], None]
WORDS = [
    "lisbon",
    "tram",
    "coffee",
    "sardines",
    "river",
    "museum",
    "garden",
    "train",
    "ticket",
    "hotel",
    "breakfast",
    "market",
    "sunset",
    "bridge",
    "castle",
    "bakery",
    "harbour",
    "festival",
    "concert",
    "book",
    "rain",
    "umbrella",
    "walk",
    "dinner",
]

# The suite's own statements. The audit reads one tenant across its scopes (counts only).
AUDIT_SPANS = CrossScopeStatement(
    "BENCH_AUDIT_SPANS",
    """
MATCH (p:PendingSpan {tenant_id: $tenant})
OPTIONAL MATCH (c:Chunk {id: p.id})
WITH p, count(c) AS chunks
RETURN p.status AS status, chunks, count(*) AS spans
""",
)
AUDIT_TURNS = CrossScopeStatement(
    "BENCH_AUDIT_TURNS",
    """
MATCH (d:Document {tenant_id: $tenant})
WITH d, COUNT { MATCH (c:Chunk {document_id: d.id}) WHERE c.index IS NOT NULL } AS turns,
     COUNT { MATCH (:Chunk {document_id: d.id})-[:NEXT]->() } AS links
RETURN sum(turns) AS turns, sum(CASE WHEN turns > 0 AND links <> turns - 1 THEN 1 ELSE 0 END)
       AS broken
""",
)
WAITING = CrossScopeStatement(
    "BENCH_WAITING",
    """
MATCH (p:PendingSpan {tenant_id: $tenant})
WHERE p.status = $queued
RETURN count(p) AS waiting,
       sum(CASE WHEN p.lease_owner STARTS WITH $prefix AND p.lease_expires_at > $now
                THEN 1 ELSE 0 END) AS held
""",
)
ERASE_SCOPE = Statement(
    "BENCH_ERASE_CYCLE_SCOPE",
    """
CALL (){ MATCH (p:PendingSpan {scope_key: $scope_key}) DETACH DELETE p }
CALL (){ MATCH (c:Chunk {scope_key: $scope_key}) DETACH DELETE c }
CALL (){ MATCH (d:Document {scope_key: $scope_key}) DETACH DELETE d }
CALL (){ MATCH (e:Entity {scope_key: $scope_key}) DETACH DELETE e }
CALL (){ MATCH (s:Scope {scope_key: $scope_key}) DETACH DELETE s }
CALL (){ MATCH (t:TermStats {scope_key: $scope_key}) DETACH DELETE t }
CALL (){ MATCH (x:Source {scope_key: $scope_key}) DETACH DELETE x }
CALL (){ MATCH (p:FactPair {scope_key: $scope_key}) DETACH DELETE p }
""",
)


def stderr(message: str) -> None:
    print(message, file=sys.stderr)


def run_principal(tenant: str, user: str, session: str) -> Principal:
    return principal_from_claims(
        {"tenant": tenant, "user": user, "agent": "bench", "session": session, "run": session}
    )


def sentence(rng: random.Random, i: int) -> str:
    return f"turn {i}: " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24))) + "."


LONG_CHARS = (1_000, 8_000)  # ``harvest --long``: a message's length, drawn evenly


def long_message(rng: random.Random, i: int) -> str:
    """A synthetic long chat message: sentences until a length drawn from ``LONG_CHARS``."""
    target = rng.randint(*LONG_CHARS)
    parts = [f"turn {i}:"]
    size = len(parts[0])
    while size < target:
        words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 24)))
        parts.append(words.capitalize() + ".")
        size += len(parts[-1]) + 1
    return " ".join(parts)[:target]


@dataclass(frozen=True, slots=True)
class Planned:
    who: Principal
    spans: list[hv.SpanDraft]


def plan(
    tenant: str, n: int, users: int, sessions: int, seed: int = 7, long: bool = False
) -> list[Planned]:
    """``n`` spans spread over ``users`` x ``sessions`` runs, one run per session (``long``:
    messages of 1,000-8,000 characters instead of a sentence)."""
    rng = random.Random(seed)
    runs = [(f"user-{u}", f"session-{u}-{s}") for u in range(users) for s in range(sessions)]
    out = [Planned(run_principal(tenant, u, s), []) for u, s in runs]
    for i in range(n):
        speaker = rng.choice(["Ana", "Ben"])
        text = long_message(rng, i) if long else sentence(rng, i)
        out[i % len(out)].spans.append(hv.SpanDraft(text, speaker, source_id=str(i)))
    return out


async def harvest_all(svc: Services, planned: Sequence[Planned], batch: int) -> int:
    accepted = 0
    for p in planned:
        for start in range(0, len(p.spans), batch):
            receipt = await hv.harvest(svc, p.who, p.spans[start : start + batch], 1)
            accepted += receipt.accepted
    return accepted


async def erase(svc: Services, planned: Sequence[Planned]) -> None:
    users = {p.who.user_id: p.who for p in planned}
    for who in users.values():
        await svc.db.scoped(resolve_scope(who, Scope.USER)).write(ERASE_SCOPE)


def _command() -> str:
    return str(Path(sys.executable).parent / "palimpsest")


def _start(env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        return subprocess.Popen(
            [_command(), "consolidate", "--workers", "1"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )


async def run_crash(
    settings: Settings,
    spans: int = 3000,
    kills: int = 20,
    workers: int = 3,
    lease_seconds: float = 5.0,
    batch: int = 16,
    users: int = 4,
    sessions: int = 3,
    deadline_seconds: float = 1800.0,
    keep: bool = False,
    say: Progress = stderr,
) -> dict[str, Any]:
    tenant = f"bench-crash-{uuid.uuid4().hex[:8]}"
    planned = plan(tenant, spans, users, sessions)
    host = socket.gethostname()
    env = {
        **os.environ,
        "PALIMPSEST_CONSOLIDATE_LEASE_SECONDS": str(lease_seconds),
        "PALIMPSEST_CONSOLIDATE_BATCH_SIZE": str(batch),
        "PALIMPSEST_CONSOLIDATE_POLL_SECONDS": "0.5",
        "PALIMPSEST_LOG_LEVEL": "WARNING",
    }
    log = Path(settings.home) / "bench-crash-workers.log"
    async with open_services(settings) as svc:
        accepted = await harvest_all(svc, planned, 100)
        say(f"{tenant}: {accepted} spans harvested; {workers} workers, {kills} kills")
        started = time.monotonic()
        procs = [_start(env, log) for _ in range(workers)]
        killed = 0
        rng = random.Random(11)

        async def waiting(prefix: str) -> tuple[int, int]:
            params = {**STATUS_PARAMS, "tenant": tenant, "prefix": prefix, "now": svc.clock()}
            [row] = await svc.db.read(WAITING, params)
            return int(row["waiting"]), int(row["held"] or 0)

        try:
            while time.monotonic() - started < deadline_seconds:
                left, _ = await waiting("\x00")
                if left == 0:
                    break
                if killed < kills:
                    i = rng.randrange(len(procs))
                    _, held = await waiting(f"{host}:{procs[i].pid}:")
                    if held:  # mid-lease: it holds spans it has not acknowledged
                        procs[i].send_signal(signal.SIGKILL)
                        procs[i].wait()
                        killed += 1
                        say(f"  kill {killed}/{kills} (pid {procs[i].pid}); {left} spans left")
                        procs[i] = _start(env, log)
                        continue
                await asyncio.sleep(0.05)
            seconds = time.monotonic() - started
        finally:
            for p in procs:
                p.send_signal(signal.SIGTERM)
            for p in procs:
                try:
                    p.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    p.kill()
        result = await audit(svc, tenant)
        if not keep:
            await erase(svc, planned)
    return {
        "benchmark": "consolidate-crash",
        **({"tenant": tenant} if keep else {}),
        "accepted": accepted,
        **result,
        "kills": killed,
        "workers": workers,
        "lease_seconds": lease_seconds,
        "batch": batch,
        "seconds": round(seconds, 2),
    }


async def audit(svc: Services, tenant: str) -> dict[str, int]:
    rows = await svc.db.read(AUDIT_SPANS, {"tenant": tenant})
    [turns] = await svc.db.read(AUDIT_TURNS, {"tenant": tenant})
    done = sum(r["spans"] for r in rows if r["status"] == "done" and r["chunks"] == 1)
    dead = sum(r["spans"] for r in rows if r["status"] == "dead" and r["chunks"] == 0)
    total = sum(r["spans"] for r in rows)
    with_chunk = sum(r["spans"] for r in rows if r["chunks"] >= 1)
    return {
        "consolidated": done,
        "lost": total - done - dead,
        "duplicated": int(turns["turns"] or 0) - with_chunk,
        "dead_letter": dead,
        "chain_errors": int(turns["broken"] or 0),
    }
