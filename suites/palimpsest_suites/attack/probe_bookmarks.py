"""Targeted probes of ``X-Palimpsest-Bookmark``: forged, altered and borrowed values, a flood
of them while another tenant reads, and whether the header counts anyone's writes."""

from __future__ import annotations

import asyncio
import base64
import struct
import time
import uuid
from typing import Any

import httpx

from palimpsest.identity.tokens import TokenKeys, mint

HEADER = "x-palimpsest-bookmark"
READ = 'query { memory(scope: USER, key: "probe") { value } }'
WRITE = 'mutation { memorySet(scope: USER, key: "probe", value: 1) { key } }'
FLOOD = 40
# A refusal should come at once; this bounds how long the probe waits for one.
PATIENCE = 30.0


def forged_raw(tx_id: int) -> str:
    """A Neo4j-shaped bookmark (``FB:`` + packstream ``[bytes(16), int, []]``) for a
    transaction far beyond any real one: what raised ids looked like to the old header."""
    body = b"\x91\xcc\x10" + uuid.uuid4().bytes + b"\xcb" + struct.pack(">q", tx_id) + b"\x90"
    return "FB:" + base64.b64encode(body).decode()


def altered(sealed: str) -> str:
    """One character of the ciphertext changed: every bit of a middle character is used."""
    middle = len(sealed) // 2
    return sealed[:middle] + ("A" if sealed[middle] != "A" else "B") + sealed[middle + 1 :]


async def _post(
    http: httpx.AsyncClient, token: str, query: str, bookmark: str | None = None
) -> tuple[float, int, str | None, str | None]:
    """Seconds, status, error code (or None) and the bookmark header of one request."""
    headers = {"Authorization": f"Bearer {token}"}
    if bookmark is not None:
        headers[HEADER] = bookmark
    started = time.monotonic()
    try:
        response = await http.post("/graphql", json={"query": query}, headers=headers)
    except httpx.TimeoutException:
        return time.monotonic() - started, 0, "TIMEOUT", None
    seconds = time.monotonic() - started
    errors = response.json().get("errors") or []
    code = errors[0].get("extensions", {}).get("code") if errors else None
    return seconds, response.status_code, code, response.headers.get(HEADER)


async def run(url: str, keys: TokenKeys, tenants: tuple[str, str]) -> dict[str, dict[str, Any]]:
    member = mint(keys, tenant=tenants[0], user="probe-bm", agent="planner")
    colleague = mint(keys, tenant=tenants[0], user="probe-bm-other", agent="planner")
    outsider = mint(keys, tenant=tenants[1], user="probe-bm", agent="planner")
    async with httpx.AsyncClient(base_url=url, timeout=PATIENCE) as http:
        _, _, _, sealed = await _post(http, member, WRITE)
        if sealed is None:
            return {"bookmark_forged": {"passed": False, "reason": "no bookmark on a write"}}
        cases = {
            "raw_raised_id": (member, forged_raw(2**40)),
            "altered": (member, altered(sealed)),
            "another_user": (colleague, sealed),
            "another_tenant": (outsider, sealed),
        }
        forged: dict[str, Any] = {}
        for name, (token, bookmark) in cases.items():
            for query in (READ, WRITE):
                seconds, status, code, _ = await _post(http, token, query, bookmark)
                forged[name] = round(max(forged.get(name, 0.0), seconds), 3)
                forged[f"{name}_code"] = code
                forged[f"{name}_status"] = status
        forged_ok = all(forged[f"{n}_code"] == "INVALID_ARGUMENT" and forged[n] < 2 for n in cases)

        flood = await _flood(http, member, outsider, cases["raw_raised_id"][1])

        counter = await _counter(http, member, outsider)
    return {
        "bookmark_forged": {"passed": forged_ok, "worst_seconds": max(forged[n] for n in cases)}
        | forged,
        "bookmark_flood": flood,
        "bookmark_counter": counter,
    }


async def _flood(
    http: httpx.AsyncClient, attacker: str, bystander: str, bookmark: str
) -> dict[str, Any]:
    """``FLOOD`` forged requests at once from one member while another tenant's member reads
    and a health check runs: the flood is refused fast and nobody else waits."""

    async def healthz() -> float:
        started = time.monotonic()
        await http.get("/healthz")
        return time.monotonic() - started

    attacks = [_post(http, attacker, READ, bookmark) for _ in range(FLOOD)]
    started = time.monotonic()
    results = await asyncio.gather(
        asyncio.gather(*attacks),
        asyncio.gather(*[_post(http, bystander, READ) for _ in range(5)]),
        asyncio.gather(*[healthz() for _ in range(5)]),
    )
    floods, reads, health = results
    worst_attack = max(r[0] for r in floods)
    worst_read = max(r[0] for r in reads)
    return {
        "passed": all(r[2] == "INVALID_ARGUMENT" for r in floods)
        and all(r[2] is None for r in reads)
        and worst_read < 5,
        "requests": FLOOD,
        "worst_forged_seconds": round(worst_attack, 3),
        "other_tenant_read_max_seconds": round(worst_read, 3),
        "healthz_max_seconds": round(max(health), 3),
        "seconds": round(time.monotonic() - started, 3),
    }


async def _counter(http: httpx.AsyncClient, writer: str, watcher: str) -> dict[str, Any]:
    """Does a tenant's header change with another tenant's writes? It must say nothing."""
    lengths: set[int] = set()
    raw_seen = False
    for writes in (0, 1, 3, 7):
        for _ in range(writes):
            await _post(http, writer, WRITE)
        _, _, _, header = await _post(http, watcher, READ)
        if header is not None:
            lengths.add(len(header))
            raw_seen = raw_seen or header.startswith("FB:")
    return {"passed": not raw_seen and len(lengths) <= 1, "distinct_lengths": len(lengths)}
