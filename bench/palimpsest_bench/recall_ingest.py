"""Loading an evaluation dataset through the real ingest path, and erasing it after.

Each document goes in with ``import_document`` (the resolver behind GraphQL
``importDocument``) as one user's Markdown, one paragraph chunk per unit; the loader checks the
parse and maps chunk and document ids back to the dataset's unit ids (``recall_eval``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial

from palimpsest.domain.documents import markdown
from palimpsest.domain.time.timeparse import parse_optional
from palimpsest.embedding import Embedder
from palimpsest.errors import InvalidArgument, QuotaExceeded
from palimpsest.identity import Scope
from palimpsest.resolvers.documents import catalog as docs
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.services import Services
from palimpsest_bench.common import gather_limited, principal
from palimpsest_bench.recall_data import Dataset, Doc, units_markdown

SCOPE = Scope.USER
INGEST_CONCURRENCY = 2  # overlap one document's database write with the next one's embedding
DELETE_CONCURRENCY = 8
Progress = Callable[[str], None]


@dataclass(slots=True)
class Loaded:
    unit_of_chunk: dict[str, str] = field(default_factory=dict)  # chunk id -> unit id
    unit_of_document: dict[str, str] = field(default_factory=dict)  # document id -> unit id
    documents: list[tuple[str, str]] = field(default_factory=list)  # (owner, document id)
    chunks: int = 0
    refused: int = 0  # documents import_document refused (too large, say): skipped, counted


async def ingest(
    svc: Services,
    tenant: str,
    ds: Dataset,
    progress: Progress,
    embedder_of: Callable[[Doc], Embedder] | None = None,
) -> Loaded:
    """``embedder_of``: the embedder a document's chunks are embedded with (a prototype's
    hook, ``title_embed``); the service's own when None."""
    loaded = Loaded()
    started = time.perf_counter()
    done = 0
    total = sum(len(d.units) + (d.heading is not None) for d in ds.docs)
    step = max(1, len(ds.docs) // 20)

    async def one(doc: Doc) -> None:
        nonlocal done
        who = principal(tenant, doc.owner)
        text = units_markdown([line for _, line in doc.units], doc.heading)
        writer = replace(svc, embedder=embedder_of(doc)) if embedder_of else svc
        try:
            imported = await importer.import_document(
                writer,
                who,
                SCOPE,
                text,
                doc.title,
                None,
                parse_optional(doc.observed_at, "observed_at"),
            )
        except (InvalidArgument, QuotaExceeded):
            loaded.refused += 1
            return
        chunks = list(imported.chunks)
        if doc.heading is not None:
            head = chunks.pop(0)
            if head.type != markdown.ChunkType.HEADING.value:
                raise RuntimeError(f"document {doc.title!r} did not start with its heading")
            loaded.unit_of_chunk[head.id] = doc.units[0][0]
        if [c.text.strip() for c in chunks] != [line for _, line in doc.units]:
            raise RuntimeError(f"document {doc.title!r} did not parse one chunk per unit")
        for chunk, (unit, _) in zip(chunks, doc.units, strict=True):
            loaded.unit_of_chunk[chunk.id] = unit
        loaded.unit_of_document[imported.summary.id] = doc.units[0][0]
        loaded.documents.append((doc.owner, imported.summary.id))
        loaded.chunks += len(imported.chunks)
        done += 1
        if done % step == 0 or done == len(ds.docs):
            rate = loaded.chunks / max(time.perf_counter() - started, 1e-9)
            progress(
                f"  imported {done}/{len(ds.docs)} documents, "
                f"{loaded.chunks}/{total} chunks ({rate:.0f} chunks/s)"
            )

    await gather_limited([partial(one, d) for d in ds.docs], INGEST_CONCURRENCY)
    return loaded


async def erase(svc: Services, tenant: str, loaded: Loaded) -> None:
    async def one(owner: str, doc_id: str) -> None:
        await docs.delete_document(svc, principal(tenant, owner), SCOPE, doc_id)

    jobs = [partial(one, o, d) for o, d in loaded.documents]
    await gather_limited(jobs, DELETE_CONCURRENCY)
