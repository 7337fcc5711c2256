"""The cost of ``context`` (docs/reference/context.md), in process on the configured Neo4j with
the real embedding model and its tokenizer.

One fresh user scope holds ``pinned`` pinned notes, ``facts`` facts about one person and a
document of ``chunks`` paragraphs. For each budget, ``context`` and the ``search`` it runs
inside (same query, same topK) are timed interleaved, ``reads`` times each: p50/p95 in ms,
and what the block held (tokens, pieces of each kind, truncated). ``overhead_p50_ms`` is
context's p50 less search's: the pinned and fact reads, the token counting and the packing.
The person is erased afterwards.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity import Principal, Scope
from palimpsest.identity.principal import console_operator
from palimpsest.resolvers.documents import importing as document_import
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall import context_block as ctx
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest_bench.common import principal

BUDGETS = (50, 200, 1000, 8000)
QUERY = "What is Ada Lovelace working on with the engine?"


def run(
    settings: Settings,
    pinned: int = 5,
    facts_n: int = 20,
    chunks: int = 200,
    reads: int = 30,
    say: Callable[[str], None] = print,
) -> dict[str, Any]:
    return asyncio.run(_run(settings, pinned, facts_n, chunks, reads, say))


async def _run(
    settings: Settings,
    pinned: int,
    facts_n: int,
    chunks: int,
    reads: int,
    say: Callable[[str], None],
) -> dict[str, Any]:
    tenant = f"bench-ctx-{uuid.uuid4().hex[:8]}"
    who = principal(tenant, "ada")
    async with open_services(settings) as svc:
        try:
            await _seed(svc, who, pinned, facts_n, chunks, say)
            return {
                "bench": "context",
                "pinned": pinned,
                "facts": facts_n,
                "chunks": chunks,
                "reads": reads,
                "budgets": [await _budget(svc, who, b, reads, say) for b in BUDGETS],
            }
        finally:
            assert who.user_id is not None
            await erasure.erase_user(svc, console_operator(tenant), who.user_id)


async def _seed(
    svc: Services,
    who: Principal,
    pinned: int,
    facts_n: int,
    chunks: int,
    say: Callable[[str], None],
) -> None:
    say(f"seeding {pinned} pinned notes, {facts_n} facts, {chunks} chunks")
    for i in range(pinned):
        text = f"Core note {i}: the user is Ada Lovelace. She prefers answers of {i + 2} lines."
        await memory.set_value(
            svc, who, Scope.USER, f"core/{i}", text, None, True, None, pinned=True
        )
    drafts = [
        FactDraft(
            EntityRef("person", "Ada Lovelace"),
            "works_on",
            EntityRef("thing", f"engine part {i}"),
            None,
            f"Ada Lovelace works on engine part {i}.",
        )
        for i in range(facts_n)
    ]
    await facts.assert_facts(svc, who, Scope.USER, drafts)
    body = "\n\n".join(
        f"Paragraph {i} explains how the engine reads card {i}. The mill computes a value. "
        f"The store keeps column {i} until the next card arrives."
        for i in range(chunks)
    )
    await document_import.import_document(
        svc, who, Scope.USER, "# Engine notes\n\n" + body + "\n", None, None, None
    )


async def _budget(
    svc: Services, who: Principal, budget: int, reads: int, say: Callable[[str], None]
) -> dict[str, Any]:
    ask = asks.Ask(QUERY, Scope.USER, ctx.top_k_for(budget))
    times: dict[str, list[float]] = {"context": [], "search": []}
    block = await ctx.context(svc, who, Scope.USER, QUERY, budget)  # warm the caches
    for _ in range(reads):
        times["context"].append(await _ms(ctx.context(svc, who, Scope.USER, QUERY, budget)))
        times["search"].append(await _ms(asks.search(svc, who, ask)))
    kinds = [i.kind for i in block.items]
    found = {
        "budget": budget,
        "top_k": ask.top_k,
        "tokens": block.tokens,
        "truncated": block.truncated,
        "pieces": {k: kinds.count(k) for k in ("pinned", "fact", "hit")},
        **{f"{name}_ms": _stats(ms) for name, ms in times.items()},
        "overhead_p50_ms": round(
            statistics.median(times["context"]) - statistics.median(times["search"]), 2
        ),
    }
    say(f"budget {budget}: {found}")
    return found


async def _ms(call: Awaitable[Any]) -> float:
    start = time.perf_counter()
    await call
    return (time.perf_counter() - start) * 1000


def _stats(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)
    return {
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 2),
    }
