"""The memory cycle under load (issue 8): harvest throughput. (Consolidation under crashes,
``consolidate-crash``, is ``palimpsest_suites.crash``, which the product's tests run too.)

- ``harvest``: spans (one sentence each, or with ``long`` synthetic chat messages of
  1,000-8,000 characters) through GraphQL ``harvest`` over HTTP (uvicorn in-process, a real run
  token, batches of ``batch`` spans), then, on the same turn texts in the batches the
  consolidator leases, embedding alone (half before, half after, so both see the same
  machine) against the whole consolidation (lease, embed, mentions, write, ack) run
  in-process by one worker. ``ratio`` = consolidation / embedding-only spans/s. With
  ``model_latency``, the ``model`` extractor and the judge are on, against a local stand-in
  host (``model_standin``) answering after that many seconds.

The tenant is erased afterwards. Figures are measured, never asserted.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from palimpsest.config import Settings
from palimpsest.domain.documents.conversation import turn_text
from palimpsest.extraction import load_extractors, load_judge
from palimpsest.identity import Scope, resolve_scope
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.resolvers.cycle import queue
from palimpsest.resolvers.cycle.consolidate import WorkerConfig, consolidate_scope
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest.server import serve_in_thread
from palimpsest_bench.model_standin import model_standin
from palimpsest_bench.sql import GraphQLClient
from palimpsest_suites.crash import erase, plan, stderr

Progress = Callable[[str], None]

# -- harvest throughput -------------------------------------------------------------------

HARVEST_GQL = (
    "mutation($spans: [SpanInput!]!) { harvest(spans: $spans, compactionGeneration: 1) "
    "{ accepted duplicates } }"
)


async def run_harvest(
    settings: Settings,
    spans: int = 2000,
    batch: int = 50,
    say: Progress = stderr,
    long: bool = False,
    model_latency: float | None = None,
) -> dict[str, Any]:
    if model_latency is None:
        return await _run_harvest(settings, spans, batch, say, long)
    with model_standin(model_latency) as url:
        on = {
            "extractors": ",".join([*settings.queue.extractor_names, "model"]),
            "model_protocol": "openai",
            "model_url": url,
            "model_name": "standin",
            "model_api_key": None,
            "max_extraction_tokens_per_day": 0,
        }
        run = await _run_harvest(settings.replace(**on), spans, batch, say, long)
    return {**run, "model_latency_s": model_latency}


async def _run_harvest(
    settings: Settings, spans: int, batch: int, say: Progress, long: bool
) -> dict[str, Any]:
    settings = settings.replace(log_level="WARNING")
    tenant = f"bench-harvest-{uuid.uuid4().hex[:8]}"
    planned = plan(tenant, spans, 1, 4, long=long)
    keys = load_keys(settings)
    async with open_services(settings) as svc:
        try:
            # No consolidator in the server: this harness consolidates, and times it, itself.
            quiet = settings.replace(serve_consolidators=0)
            with serve_in_thread(quiet) as url:
                say(f"{spans} spans through GraphQL harvest, {batch} per call ...")
                t0 = time.perf_counter()
                for p in planned:
                    token = mint(
                        keys,
                        tenant=tenant,
                        user=p.who.user_id,
                        agent="bench",
                        session=p.who.session_id,
                        run=p.who.run_id,
                    )
                    client = GraphQLClient(url, token)
                    for start in range(0, len(p.spans), batch):
                        chunk = p.spans[start : start + batch]
                        wire = [
                            {"text": s.text, "speaker": s.speaker, "sourceId": s.source_id}
                            for s in chunk
                        ]
                        client.call(HARVEST_GQL, spans=wire)
                    client.close()
                harvest_s = time.perf_counter() - t0
            texts = [turn_text(s.speaker, s.text)[0] for p in planned for s in p.spans]
            cfg = WorkerConfig(
                owner=f"bench-{uuid.uuid4().hex[:6]}",
                extractors=load_extractors(settings),
                batch_size=settings.queue.batch_size,
                judge=load_judge(settings),
            )
            await svc.embed(texts[: cfg.batch_size])  # warm-up
            # Embedding alone, half before and half after the consolidation, so both see the
            # same (shared, noisy) machine.
            half = len(texts) // 2 // cfg.batch_size * cfg.batch_size
            say(f"embedding only, in batches of {cfg.batch_size} (first half) ...")
            embed_s = await _embed_only(svc, texts[:half], cfg.batch_size)
            say("consolidating ...")
            ref = resolve_scope(planned[0].who, Scope.USER)
            consolidated = 0
            counts: Counter[str] = Counter()
            t2 = time.perf_counter()
            while True:
                outcome = await consolidate_scope(svc, cfg, tenant, ref.owner_id, ref.scope_key)
                if not outcome.leased:
                    break
                consolidated += outcome.consolidated
                counts.update(dict(outcome.extraction))
            consolidate_s = time.perf_counter() - t2
            say("embedding only (second half) ...")
            embed_s += await _embed_only(svc, texts[half:], cfg.batch_size)
            waiting = await queue.pending_scopes(svc, 1000)
        finally:
            await erase(svc, planned)
    left = sum(1 for w in waiting if w.tenant_id == tenant)
    return {
        "benchmark": "harvest",
        "spans": spans,
        "long": long,
        "chars_median": sorted(len(s.text) for p in planned for s in p.spans)[spans // 2],
        "batch": batch,
        "harvest_spans_per_s": round(spans / harvest_s, 1),
        "consolidated": consolidated,
        "scopes_left": left,
        "consolidate_spans_per_s": round(consolidated / consolidate_s, 1),
        "embed_only_spans_per_s": round(len(texts) / embed_s, 1),
        "ratio": round((consolidated / consolidate_s) / (len(texts) / embed_s), 3),
        "lease_batch": cfg.batch_size,
        "extractors": settings.queue.extractor_names,
        "judge": cfg.judge is not None,
        **{k: counts[k] for k in ("facts", "extraction_failed", "judged") if counts[k]},
        "seconds": round(harvest_s + embed_s + consolidate_s, 2),
    }


async def _embed_only(svc: Services, texts: Sequence[str], batch: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        await svc.embed(texts[start : start + batch])
    return time.perf_counter() - started
