"""``palimpsest reembed``: a model migration run from the command line (``resolvers.reembed``).

``--model NAME`` builds the new model's vectors beside the active ones, in batches, until
none is missing (a killed run resumes: progress is in the database); ``--cutover`` embeds
any row still missing one, then switches recall; ``--drop-old`` removes the old vectors and
indexes; ``--abort`` gives up a migration that is building (its vectors and indexes removed,
the active model kept). Each prints a JSON summary.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.embedding.models import check_name, load_model
from palimpsest.resolvers import reembed


async def run(
    settings: Settings,
    *,
    model: str | None,
    batch: int,
    cutover: bool = False,
    drop_old: bool = False,
    abort: bool = False,
    say: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    from palimpsest.runtime import open_services

    settings.neo4j.refuse_sharded("`palimpsest reembed`")
    if model is not None:
        check_name(model)  # an unknown name is refused before the database is touched
        embedder = await anyio.to_thread.run_sync(
            lambda: load_model(model, settings.model_dir, settings.embedding.threads)
        )
    async with open_services(settings, dual=False) as svc:
        progress = reembed.Progress(model or svc.embedder.model_name)
        if model is not None:
            state = await reembed.start(svc, model, embedder.dimensions)
            assert state.target is not None
            say(f"reembed: {model} ({embedder.dimensions} dimensions), batches of {batch}")
            await reembed.fill(svc, state.target.slot, embedder, batch, say, progress)
        if cutover:
            state = await reembed.read_state(svc.db)
            missing = sum(p.missing for p in await reembed.counts(svc.db, state))
            if state.target is not None and missing:
                # Rows a process wrote before it read the migration's start: embedded here,
                # as ``--drop-old`` embeds those written before a cutover was read.
                target = state.target
                if model != target.model:
                    embedder = await anyio.to_thread.run_sync(
                        lambda: load_model(
                            target.model, settings.model_dir, settings.embedding.threads
                        )
                    )
                say(f"reembed: {missing} rows lack a vector of {target.model}, embedding them")
                await reembed.fill(svc, target.slot, embedder, batch, say, progress)
            await reembed.cutover(svc)
        if drop_old:
            await reembed.drop_old(svc, batch, say, progress)
        if abort:
            await reembed.abort(svc, batch, progress)
        state = await reembed.read_state(svc.db)
        status = reembed.EmbeddingStatus(state, await reembed.counts(svc.db, state))
        return progress.summary(state, status)
