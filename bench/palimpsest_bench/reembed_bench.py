"""``palimpsest bench reembed``: a model migration's throughput against embedding alone.

On a private Neo4j (a migration is database-wide: the shared one serves other work), a
scope's documents are imported with the default model; then ``resolvers.reembed.fill``
builds the target model's vectors (rows/s, wall and process CPU), and the same texts are
embedded by the target model alone, with no database, as the ceiling. Prints JSON.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.domain.documents import markdown
from palimpsest.embedding.models import load_model
from palimpsest.identity import Scope
from palimpsest.local import neo4j as neo4j_local
from palimpsest.resolvers import reembed
from palimpsest.resolvers.documents import importing as importer
from palimpsest.runtime import open_services
from palimpsest_bench.common import principal
from palimpsest_bench.recall_load import AGENT, ScopePlan, documents_for, load_average
from palimpsest_suites import faults
from palimpsest_suites.served import free_port

Say = reembed.Say


async def run(settings: Settings, chunks: int, batch: int, model: str, say: Say) -> dict[str, Any]:
    home = Path(tempfile.mkdtemp(prefix="bench-reembed-")) / "home"
    s = faults.fault_settings(home, free_port(), free_port())
    faults.prepare_home(s, settings, say)
    models = s.home / "models"
    if not models.exists() and settings.model_dir.exists():
        models.symlink_to(settings.model_dir, target_is_directory=True)
    s = s.replace(log_level="WARNING")
    neo4j_local.start(s, say)
    try:
        return await _measure(s, chunks, batch, model, say)
    finally:
        neo4j_local.stop(s, say)
        shutil.rmtree(home.parent, ignore_errors=True)


async def _measure(s: Settings, chunks: int, batch: int, model: str, say: Say) -> dict[str, Any]:
    tenant = f"bench-reembed-{uuid.uuid4().hex[:8]}"
    plan = ScopePlan(tenant, "reembed", chunks)
    who = principal(tenant, plan.user, AGENT)
    documents = list(documents_for(plan))
    texts = [c.text for text, _ in documents for c in markdown.parse(text).chunks]
    target = await anyio.to_thread.run_sync(load_model, model, s.model_dir, s.embedding.threads)
    async with open_services(s) as svc:
        say(f"importing {len(documents)} documents ({len(texts)} chunks) ...")
        for start in range(0, len(documents), 20):
            drafts = [importer.DocumentDraft(t) for t, _ in documents[start : start + 20]]
            await importer.import_documents(svc, who, Scope.USER, drafts)
        load_before = load_average()
        state = await reembed.start(svc, model, target.dimensions)
        assert state.target is not None
        say(f"reembed into {model}, batches of {batch} ...")
        progress = reembed.Progress(model)
        wall, cpu = time.perf_counter(), time.process_time()
        await reembed.fill(svc, state.target.slot, target, batch, lambda _: None, progress)
        reembed_s, reembed_cpu = time.perf_counter() - wall, time.process_time() - cpu
        status = reembed.EmbeddingStatus(state, await reembed.counts(svc.db, state))
    say("the same texts, embedding alone ...")
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), batch):
        target.embed(texts[start : start + batch])
    embed_s, embed_cpu = time.perf_counter() - wall, time.process_time() - cpu
    rows = progress.rows
    return {
        "model": model,
        "batch": batch,
        "rows": rows,
        "missing": {p.plane: p.missing for p in status.planes},
        "reembed_seconds": round(reembed_s, 2),
        "reembed_rows_per_second": round(rows / reembed_s, 1),
        "reembed_cpu_seconds": round(reembed_cpu, 2),
        "reembed_embed_seconds": round(progress.embed_seconds, 2),
        "embed_only_seconds": round(embed_s, 2),
        "embed_only_rows_per_second": round(len(texts) / embed_s, 1),
        "embed_only_cpu_seconds": round(embed_cpu, 2),
        "throughput_ratio": round((rows / reembed_s) / (len(texts) / embed_s), 3),
        "load_average_before": load_before,
        "load_average_after": load_average(),
    }
