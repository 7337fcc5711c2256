"""Markdown in, a tree of typed chunks out: one document, or many in one transaction.

Each document is parsed and its terms indexed once (off the event loop, ``offload.py``); all
chunks of a call are embedded in one batch; every document, its chunks and their tree and
reading-order edges are written in a single transaction, and the answer is built from what was
written. Batching matters for small documents: Neo4j's Lucene-backed indexes cost a few
milliseconds per transaction, whatever its size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.cypher import documents as q
from palimpsest.cypher import quotas as qq
from palimpsest.cypher import revisions as rq
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.documents import markdown, revisions
from palimpsest.domain.ranking.fulltext import StatsDelta
from palimpsest.embedding import Vector
from palimpsest.errors import Conflict, InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers import term_index
from palimpsest.resolvers.common import new_id, provenance_from, writer_params
from palimpsest.resolvers.documents import passages
from palimpsest.resolvers.documents import revisions as document_revisions
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas
from palimpsest.schema.models import Chunk, Document, DocumentSummary, Span

ROOT_TYPE = "document"
MAX_TITLE = 512
MAX_PATH = 1024
MAX_BATCH = 100
MAX_BATCH_BYTES = markdown.MAX_DOCUMENT_BYTES
NO_VECTOR = Vector()  # a text whose embedding the call did not make (see work)


@dataclass(frozen=True, slots=True)
class DocumentDraft:
    markdown: str
    title: str | None = None
    path: str | None = None
    observed_at: datetime | None = None
    # False: a document already at ``path`` in the scope gets a new revision instead.
    new_document: bool = False


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
    new_document: bool = False,
) -> Document:
    draft = DocumentDraft(text, title, path, observed_at, new_document)
    [doc] = await import_documents(svc, who, scope, [draft])
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
    parsed = [await _parse(svc, i, d) for i, d in enumerate(drafts)]
    over = [p.draft.path for p in parsed if p.draft.path is not None and not p.draft.new_document]
    if len(set(over)) < len(over):
        raise InvalidArgument("two documents of one call write over the same path")
    db = svc.db.scoped(ref)
    # What the documents at those paths hold now: their texts need no new embedding.
    known: set[str] = set()
    for path in over:
        for found in await db.read(rq.FIND_BY_PATH, {"path": path}):
            rows = await db.read(rq.READ_CURRENT, {"id": found["id"], "gap": revisions.SEQ_GAP})
            known |= {r["text"] for r in rows}
    fresh = sorted(
        {
            c.text
            for p in parsed
            for c in p.parsed.chunks
            if c.text not in known or p.draft.path not in over
        }
    )
    vectors = dict(zip(fresh, await svc.embed(fresh), strict=True))
    long = await passages.embed(svc, fresh)
    now = svc.clock()
    plans = [
        _plan(
            ref,
            who,
            p,
            [vectors.get(c.text, NO_VECTOR) for c in p.parsed.chunks],
            now,
            await _index(svc, p),
        )
        for p in parsed
    ]
    written: dict[int, str] = {}  # draft index -> the document it wrote a revision of

    async def work(tx: ScopedTx) -> None:
        written.clear()
        created = []
        new_bytes = new_chunks = 0
        for i, (p, (params, _, delta)) in enumerate(zip(parsed, plans, strict=True)):
            target = await _existing(tx, svc, p.draft)
            if target is None:
                if any(not c["embedding"] for c in params["chunks"]):
                    raise Conflict("a document at the path went away meanwhile; retry")
                await tx.run(q.CREATE_DOCUMENT, params)
                chunks = [(c["id"], c["text"]) for c in params["chunks"]]
                await passages.write(tx, svc, chunks, long)
                created.append(delta)
                size = len(p.draft.markdown.encode())
                await tx.run(qq.STAMP_DOCUMENT_BYTES, {"id": params["id"], "bytes": size})
                new_bytes += size
                new_chunks += len(params["chunks"]) + 1  # and the document's root chunk
                continue
            title = p.draft.title or p.parsed.title
            await document_revisions.write_revision(
                tx,
                svc,
                who,
                target,
                document_revisions.targets_of(p.parsed),
                vectors,
                p.parsed.preamble,
                title,
                p.draft.path,
                p.observed,
                long=long,
            )
            written[i] = target["document"]["id"]
        await term_index.apply(tx, svc.settings, "chunk", term_index.merged(created))
        grown = {quotas.Plane.CHUNKS: new_chunks, quotas.Plane.DOCUMENT_BYTES: new_bytes}
        await quotas.admit(tx, svc.settings, grown)

    await db.write_tx(work)
    out = []
    for i, (_, doc, _) in enumerate(plans):
        if i in written:
            again = await document_revisions.read_revision(svc, who, scope, written[i], None, None)
            assert again is not None
            out.append(again)
        else:
            out.append(doc)
    return out


async def _existing(tx: ScopedTx, svc: Services, draft: DocumentDraft) -> Row | None:
    """The live document at the draft's path, locked, when the draft writes over it."""
    if draft.path is None or draft.new_document:
        return None
    for found in await tx.run(rq.FIND_BY_PATH, {"path": draft.path}):
        return await document_revisions.lock(tx, svc, found["id"])
    return None


async def _parse(svc: Services, index: int, draft: DocumentDraft) -> _Parsed:
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
    size = len(draft.markdown)
    return _Parsed(draft, observed, await svc.offload.run(size, markdown.parse, draft.markdown))


async def _index(svc: Services, p: _Parsed) -> tuple[list[dict[str, Any]], StatsDelta]:
    """The stored fields of a parsed document's chunks, and what adding them changes in the
    statistics: seconds of CPU for a large document, so off the event loop."""
    title = p.draft.title or p.parsed.title
    tree = [(c.type.value, c.text, c.parent) for c in p.parsed.chunks]
    settings = svc.settings
    on, context = settings.recall.fulltext_neighbours, settings.recall.fulltext_context
    most = settings.recall.fulltext_neighbours_max_terms
    size = len(p.draft.markdown)
    return await svc.offload.run(
        size, term_index.document_fields, title, tree, on, context, p.observed, most
    )


def _plan(
    ref: ScopeRef,
    who: Principal,
    p: _Parsed,
    vectors: list[Vector],
    now: datetime,
    index: tuple[list[dict[str, Any]], StatsDelta],
) -> tuple[dict[str, Any], Document, StatsDelta]:
    """The statement's parameters, the document they write, and the statistics change."""
    chunks = p.parsed.chunks
    title = p.draft.title or p.parsed.title
    indexed, delta = index
    ids = [new_id() for _ in chunks]
    doc_id = new_id()
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
                "seq": (c.index + 1) * revisions.SEQ_GAP,
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
    document = Document(summary, p.parsed.preamble, built, [c.separator for c in chunks])
    return params, document, delta
