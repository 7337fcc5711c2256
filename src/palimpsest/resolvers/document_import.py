"""Markdown in, a tree of typed chunks out: one document, or many in one transaction.

Each document is parsed once (off the event loop); all chunks of a call are embedded in one
batch; every document, its chunks and their tree and reading-order edges are written in a
single transaction, and the answer is built from what was written. Batching matters for
small documents: Neo4j's Lucene-backed indexes cost a few milliseconds per transaction,
whatever its size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import anyio.to_thread

from palimpsest import markdown
from palimpsest.cypher import documents as q
from palimpsest.cypher.executor import ScopedTx
from palimpsest.embedding import Vector
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers import term_index
from palimpsest.resolvers.common import new_id, provenance_from, writer_params
from palimpsest.resolvers.services import Services
from palimpsest.schema.models import Chunk, Document, DocumentSummary, Span

ROOT_TYPE = "document"
MAX_TITLE = 512
MAX_PATH = 1024
MAX_BATCH = 100
MAX_BATCH_BYTES = markdown.MAX_DOCUMENT_BYTES


@dataclass(frozen=True, slots=True)
class DocumentDraft:
    markdown: str
    title: str | None = None
    path: str | None = None
    observed_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class _Parsed:
    draft: DocumentDraft
    observed: datetime | None
    parsed: markdown.ParsedDocument


async def import_document(
    svc: Services,
    who: Principal,
    scope: Scope,
    text: str,
    title: str | None,
    path: str | None,
    observed_at: datetime | None,
) -> Document:
    [doc] = await import_documents(svc, who, scope, [DocumentDraft(text, title, path, observed_at)])
    return doc


async def import_documents(
    svc: Services, who: Principal, scope: Scope, drafts: Sequence[DocumentDraft]
) -> list[Document]:
    """Import up to ``MAX_BATCH`` documents atomically: all of them, or none."""
    ref = resolve_scope(who, scope)
    if not 1 <= len(drafts) <= MAX_BATCH:
        raise InvalidArgument(f"{len(drafts)} documents: give 1 to {MAX_BATCH} per call")
    size = sum(len(d.markdown.encode()) for d in drafts)
    if size > MAX_BATCH_BYTES:
        raise InvalidArgument(
            f"the documents hold {size} bytes; the limit per call is {MAX_BATCH_BYTES}"
        )
    parsed = [await _parse(i, d) for i, d in enumerate(drafts)]
    texts = [c.text for p in parsed for c in p.parsed.chunks]
    vectors = iter(await svc.embed(texts))
    now = svc.clock()
    neighbours = svc.settings.fulltext_neighbours
    plans = [
        _plan(ref, who, p, [next(vectors) for _ in p.parsed.chunks], now, neighbours)
        for p in parsed
    ]
    delta = term_index.added([c for params, _ in plans for c in params["chunks"]])

    async def work(tx: ScopedTx) -> None:
        for params, _ in plans:
            await tx.run(q.CREATE_DOCUMENT, params)
        await term_index.apply(tx, svc.settings, "chunk", delta)

    await svc.db.scoped(ref).write_tx(work)
    return [doc for _, doc in plans]


async def _parse(index: int, draft: DocumentDraft) -> _Parsed:
    where = f"documents[{index}]"
    observed = draft.observed_at
    path = draft.path
    if path is not None and (
        not path.startswith("/") or len(path) > MAX_PATH or any(ord(ch) < 0x20 for ch in path)
    ):
        raise InvalidArgument(f"{where}.path must start with '/' and be at most {MAX_PATH} chars")
    if draft.title is not None and not 0 < len(draft.title) <= MAX_TITLE:
        raise InvalidArgument(f"{where}.title must be 1-{MAX_TITLE} characters")
    markdown.check_document(draft.markdown)
    # Parsing a large document takes seconds of CPU; keep it off the event loop.
    return _Parsed(draft, observed, await anyio.to_thread.run_sync(markdown.parse, draft.markdown))


def _plan(
    ref: ScopeRef,
    who: Principal,
    p: _Parsed,
    vectors: list[Vector],
    now: datetime,
    neighbours: bool,
) -> tuple[dict[str, Any], Document]:
    """The statement's parameters, and the document they write."""
    chunks = p.parsed.chunks
    indexed = term_index.chunk_fields([c.text for c in chunks], neighbours)
    ids = [new_id() for _ in chunks]
    doc_id = new_id()
    title = p.draft.title or p.parsed.title
    params = {
        **writer_params(who),
        "id": doc_id,
        "root_id": new_id(),
        "root_type": ROOT_TYPE,
        "title": title,
        "path": p.draft.path,
        "preamble": p.parsed.preamble,
        "observed_at": p.observed,
        "now": now,
        "parents": [-1 if c.parent is None else c.parent for c in chunks],
        "chunks": [
            {
                "id": ids[c.index],
                "type": c.type.value,
                "text": c.text,
                "separator": c.separator,
                "position": c.position,
                "index": c.index,
                "level": c.level,
                "language": c.language,
                "start_line": c.start_line,
                "end_line": c.end_line,
                "start_char": c.start_char,
                "end_char": c.end_char,
                "embedding": vectors[c.index],
                **indexed[c.index],
            }
            for c in chunks
        ],
    }
    provenance = provenance_from({**writer_params(who), "tenant_id": ref.tenant_id}, who)
    built = [
        Chunk(
            id=ids[c.index],
            document_id=doc_id,
            type=c.type.value,
            text=c.text,
            parent_id=None if c.parent is None else ids[c.parent],
            position=c.position,
            index=c.index,
            level=c.level,
            language=c.language,
            revision=1,
            span=Span(c.start_line, c.end_line, c.start_char, c.end_char),
            observed_at=p.observed,
            created_at=now,
            updated_at=now,
            provenance=provenance,
        )
        for c in chunks
    ]
    summary = DocumentSummary(doc_id, title, p.draft.path, len(chunks), now, now, provenance)
    return params, Document(summary, p.parsed.preamble, built, [c.separator for c in chunks])
