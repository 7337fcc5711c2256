"""Probe: work proportional to a request's size never stalls the other callers (issue 46,
items 1, 2 and 14).

Each case runs one request at its cap, as one member of the first tenant, while ``/healthz``
and a member of the second tenant reading a key are sampled every ``SAMPLE_S`` seconds; it
answers the request's time and code, and the samplers' largest and median latency. A case
passes when the request was answered (or refused with the cap's code) and neither sampler
ever waited longer than ``BOUND_S``. Cases:

- ``diff_at_cap``: ``documentDiff`` of two revisions of ``diff_lines`` lines each, the second
  a shuffle of the first (the line diff's slow case); one line more is refused
  ``QUOTA_EXCEEDED`` (``diffMaxLines``);
- ``import_at_cap``: ``importDocument`` of a document just under 5 MiB, in ``IMPORT_CHUNKS``
  paragraphs (its term indexing and parsing are proportional to its bytes);
- ``directory_rename_at_cap``: a memory-file directory of ``files`` files renamed, then
  deleted (the setup writes the files first, unsampled).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from palimpsest.identity.tokens import TokenKeys, mint

SAMPLE_S = 0.1
BOUND_S = 1.0
IMPORT_BYTES = 5 * 1024 * 1024 - 4096
IMPORT_CHUNKS = 20
PARAGRAPH_LINES = 2000
IMPORT = """mutation($m: String!, $p: String) { importDocument(scope: USER, markdown: $m,
  path: $p) { summary { id revision } } }"""
DIFF = """query($id: ID!, $a: Int!, $b: Int!) {
  documentDiff(scope: USER, id: $id, fromRevision: $a, toRevision: $b) }"""
EDIT = """mutation($c: MemoryFileCommandInput!) { updateMemoryFile(scope: USER, command: $c)
  { text } }"""
SET = """mutation($k: String!) { memorySet(scope: USER, key: $k, value: 1) { key } }"""
GET = """query($k: String!) { memory(scope: USER, key: $k) { key } }"""
Gql = Callable[[str, str], Awaitable[dict[str, Any]]]


async def run(
    url: str,
    keys: TokenKeys,
    tenants: tuple[str, str],
    *,
    diff_lines: int = 20_000,
    files: int = 100,
) -> dict[str, dict[str, Any]]:
    staller = mint(keys, tenant=tenants[0], user=f"st{secrets.token_hex(4)}", agent="probe")
    reader = mint(keys, tenant=tenants[1], user=f"rd{secrets.token_hex(4)}", agent="probe")
    timeout = httpx.Timeout(180.0)
    limits = httpx.Limits(max_connections=20)
    async with httpx.AsyncClient(base_url=url, timeout=timeout, limits=limits) as client:

        async def gql(query: str, token: str, **variables: Any) -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {token}"}
            body = {"query": query, "variables": variables}
            response = await client.post("/graphql", json=body, headers=headers)
            found: dict[str, Any] = response.json()
            return found

        await gql(SET, reader, k="bystander")

        async def sampled(work: Awaitable[dict[str, Any]]) -> dict[str, Any]:
            return await _sampled(client, gql, reader, work)

        # 1. A diff at the cap, and one line over it.
        n = diff_lines  # lines, and a blank line between paragraphs: diff_lines in all
        while n + -(-n // PARAGRAPH_LINES) - 1 > diff_lines:
            n -= 1
        lines = [f"line {i} of the probe\n" for i in range(n)]
        first = _paragraphs(lines)
        shuffled = _paragraphs(random.Random(46).sample(lines, len(lines)))
        path = f"/stall/{secrets.token_hex(4)}"
        doc_id = _id(await gql(IMPORT, staller, m=first, p=path))
        _id(await gql(IMPORT, staller, m=shuffled, p=path))
        diff = await sampled(gql(DIFF, staller, id=doc_id, a=1, b=2))
        over_id = _id(await gql(IMPORT, staller, m=first + "one\nline\nmore\n", p=None))
        refused = _code(await gql(DIFF, staller, id=over_id, a=1, b=1))
        diff |= {"lines": diff_lines, "over_cap_code": refused}
        diff["passed"] = diff["passed"] and refused == "QUOTA_EXCEEDED"

        # 2. An import at the size cap.
        body = IMPORT_BYTES // IMPORT_CHUNKS - 40
        words = "the river stone was quiet on monday and alice walked to paris "
        paragraph = (words * (body // len(words) + 1))[:body]
        big = "".join(f"Part {i}. {paragraph}\n\n" for i in range(IMPORT_CHUNKS))
        imported = await sampled(gql(IMPORT, staller, m=big, p=None))
        imported["bytes"] = len(big.encode())

        # 3. A directory of ``files`` files renamed, then deleted.
        for i in range(files):
            text = f"# Note {i}\n\nitem {i}\n"
            await gql(
                EDIT,
                staller,
                c={"command": "CREATE", "path": f"/memories/d/n{i}.md", "fileText": text},
            )
        rename = {"command": "RENAME", "oldPath": "/memories/d", "newPath": "/memories/e"}
        renamed = await sampled(gql(EDIT, staller, c=rename))
        deleted = await sampled(gql(EDIT, staller, c={"command": "DELETE", "path": "/memories/e"}))
    return {
        "diff_at_cap": diff,
        "import_at_cap": imported,
        "directory_rename_at_cap": renamed | {"files": files},
        "directory_delete_at_cap": deleted | {"files": files},
    }


async def _sampled(
    client: httpx.AsyncClient, gql: Any, reader: str, work: Awaitable[dict[str, Any]]
) -> dict[str, Any]:
    """``work``'s time and code, with /healthz and the reader's key read sampled meanwhile."""
    health: list[float] = []
    reads: list[float] = []
    done = asyncio.Event()

    async def sample(kind: list[float], call: Callable[[], Awaitable[Any]]) -> None:
        while not done.is_set():
            started = time.perf_counter()
            await call()
            kind.append(time.perf_counter() - started)
            await asyncio.sleep(SAMPLE_S)

    samplers = [
        asyncio.create_task(sample(health, lambda: client.get("/healthz"))),
        asyncio.create_task(sample(reads, lambda: gql(GET, reader, k="bystander"))),
    ]
    started = time.perf_counter()
    try:
        answer = await work
    finally:
        seconds = time.perf_counter() - started
        done.set()
        await asyncio.gather(*samplers)
    code = _code(answer)
    worst = max(health + reads, default=0.0)
    return {
        "passed": code in (None, "QUOTA_EXCEEDED") and worst < BOUND_S,
        "code": code,
        "limit": _limit(answer),
        "seconds": round(seconds, 2),
        "healthz_max_s": round(max(health, default=0.0), 3),
        "healthz_p50_s": round(statistics.median(health), 3) if health else None,
        "other_tenant_read_max_s": round(max(reads, default=0.0), 3),
        "other_tenant_read_p50_s": round(statistics.median(reads), 3) if reads else None,
        "samples": len(health) + len(reads),
    }


def _paragraphs(lines: list[str]) -> str:
    """``lines`` in paragraphs of ``PARAGRAPH_LINES`` (a chunk holds at most one value's
    bytes), a blank line between two."""
    step = PARAGRAPH_LINES
    return "\n".join("".join(lines[i : i + step]) for i in range(0, len(lines), step))


def _id(body: dict[str, Any]) -> str:
    if "data" not in body or body["data"] is None:
        raise RuntimeError(f"the probe's set-up was refused: {body.get('errors')}")
    return str(body["data"]["importDocument"]["summary"]["id"])


def _code(body: dict[str, Any]) -> str | None:
    errors = body.get("errors")
    return str(errors[0].get("extensions", {}).get("code")) if errors else None


def _limit(body: dict[str, Any]) -> str | None:
    errors = body.get("errors")
    return errors[0].get("extensions", {}).get("limit") if errors else None
