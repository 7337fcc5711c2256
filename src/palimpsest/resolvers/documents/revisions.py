"""Document revisions (docs/decisions/0008-document-revisions.md): write a revision, read
any revision whole, page the history, diff two revisions, restore one.

Every change of a document (a chunk edit, a re-import to its path, a delete, a restore) is
one revision, written by ``write_revision`` under the document's lock (``revision_write.py``;
re-exported here, where the other document resolvers call it). A past read never writes
anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from palimpsest import paging
from palimpsest.cypher import revisions as q
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.documents import markdown
from palimpsest.domain.documents import revisions as rev
from palimpsest.errors import InvalidArgument, NotFound, QuotaExceeded
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.common import check_id, provenance_from
from palimpsest.resolvers.documents import mentions as revision_mentions
from palimpsest.resolvers.documents import passages
from palimpsest.resolvers.documents.revision_write import Written as Written
from palimpsest.resolvers.documents.revision_write import lock as lock
from palimpsest.resolvers.documents.revision_write import targets_of as targets_of
from palimpsest.resolvers.documents.revision_write import write_revision as write_revision
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import retention
from palimpsest.schema.models import Chunk, Document, DocumentSummary, Provenance, Span

MAX_HISTORY_LIMIT = 500
HISTORY_NAME = "documentHistory"


@dataclass(frozen=True, slots=True)
class DocumentRevision:
    revision: int
    created_at: datetime
    deleted: bool
    changed_chunks: int | None  # None: written before revisions were recorded
    provenance: Provenance


async def read_revision(
    svc: Services,
    who: Principal,
    scope: Scope,
    doc_id: str,
    revision: int | None,
    known_at: datetime | None,
) -> Document | None:
    """Revision ``revision`` of the document, or the one current at ``known_at``. A revision
    that does not exist (or another scope's document) is NOT_FOUND; a ``known_at`` before
    the document existed, or at a deletion, reads as None, like a missing id."""
    ref = resolve_scope(who, scope)
    check_id(doc_id, "id")
    db = svc.db.scoped(ref)

    async def work(tx: ScopedTx) -> Document | None:
        listed = await tx.run(q.LIST_REVISIONS, {"id": doc_id, "before": 2**62, "limit": 1})
        if not listed:
            if revision is not None:
                raise NotFound("document not found")
            return None
        doc = listed[0]["document"]
        if revision is None and known_at is not None and known_at < doc["created_at"]:
            return None  # before the document existed: true whatever was swept
        retention.check_document_past(doc, revision, known_at)
        wanted = revision
        if wanted is None and known_at is not None:
            [at] = await tx.run(q.REVISION_AT, {"id": doc_id, "known_at": known_at})
            wanted = at["revision"]
            if wanted is None:
                legacy = not listed[0]["revisions"] and doc["created_at"] <= known_at
                if not legacy:
                    return None
                wanted = 1
        if wanted is None:
            wanted = int(doc["revision"])
        if not 1 <= wanted <= int(doc["revision"]):
            raise NotFound(f"the document has no revision {wanted}")
        head = await _head(tx, doc, wanted)
        if head["deleted"]:
            if revision is not None:
                raise NotFound(f"revision {wanted} is the document's deletion")
            return None
        found = await _document(tx, who, doc, head, wanted)
        if wanted < int(doc["revision"]):  # a sweep may have begun since the first read
            [mark] = await tx.run(q.SWEPT_MARK, {"id": doc_id})
            retention.check_document_past(mark, wanted, None)
        return found

    return await db.read_tx(work)


async def _head(tx: ScopedTx, doc: Row, revision: int) -> Row:
    """Revision ``revision``'s record (title, path, preamble, time, author)."""
    rows = await tx.run(q.LIST_REVISIONS, {"id": doc["id"], "before": revision + 1, "limit": 1})
    found = rows[0]["revisions"] if rows else []
    if found and found[0]["revision"] == revision:
        return dict(found[0])
    # Written before revisions were recorded: revision 1 is the document as it is.
    return {**doc, "revision": 1, "deleted": False, "changed_chunks": None}


async def _document(tx: ScopedTx, who: Principal, doc: Row, head: Row, revision: int) -> Document:
    params = {"id": doc["id"], "revision": revision, "gap": rev.SEQ_GAP, "embeddings": False}
    rows = await tx.run(q.READ_REVISION_CHUNKS, params)
    preamble = head["preamble"] or ""
    pieces = [(r["chunk"]["text"], r["chunk"]["separator"]) for r in rows]
    spans = rev.spans(preamble, pieces)
    siblings: dict[str | None, int] = {}
    chunks: list[Chunk] = []
    for i, (r, span) in enumerate(zip(rows, spans, strict=True)):
        c = r["chunk"]
        position = siblings.get(r["parent_id"], 0)
        siblings[r["parent_id"]] = position + 1
        chunks.append(
            Chunk(
                id=c["id"],
                document_id=c["document_id"],
                type=c["type"],
                text=c["text"],
                parent_id=r["parent_id"],
                position=position,
                index=i,
                level=c["level"],
                language=c["language"],
                revision=c["revision"] or 1,
                span=Span(span.start_line, span.end_line, span.start_char, span.end_char),
                observed_at=c["observed_at"],
                created_at=c["created_at"],
                updated_at=c["updated_at"],
                provenance=provenance_from(c, who),
            )
        )
    summary = DocumentSummary(
        id=doc["id"],
        title=head["title"],
        path=head["path"],
        chunk_count=len(chunks),
        created_at=doc["created_at"],
        updated_at=head["created_at"],
        provenance=provenance_from(head, who),
        revision=revision,
    )
    return Document(summary, preamble, chunks, [p[1] for p in pieces])


async def history(
    svc: Services, who: Principal, scope: Scope, doc_id: str, limit: int, after: str | None
) -> paging.Page[DocumentRevision]:
    """The document's revisions, newest first; another scope's document is NOT_FOUND, like
    a missing one."""
    ref = resolve_scope(who, scope)
    check_id(doc_id, "id")
    paging.check_limit(limit, MAX_HISTORY_LIMIT)
    position = paging.decode(after, HISTORY_NAME, (paging.Part.COUNT,))
    before = int(position[0]) if position else paging.MAX_COUNT
    params = {"id": doc_id, "before": before, "limit": limit + 1}
    rows = await svc.db.scoped(ref).read(q.LIST_REVISIONS, params)
    if not rows:
        raise NotFound("document not found")
    doc = rows[0]["document"]
    records = list(rows[0]["revisions"])
    if not records and before > 1 and int(doc["revision"]) == 1:
        records = [{**doc, "revision": 1, "deleted": False, "changed_chunks": None}]
    items = [
        DocumentRevision(
            revision=int(r["revision"]),
            created_at=r["created_at"],
            deleted=bool(r["deleted"]),
            changed_chunks=r["changed_chunks"],
            provenance=provenance_from(r, who),
        )
        for r in records
    ]
    return paging.page(items, limit, HISTORY_NAME, lambda r: [str(r.revision)])


async def diff(
    svc: Services, who: Principal, scope: Scope, doc_id: str, from_revision: int, to_revision: int
) -> str:
    """A unified diff of two revisions' Markdown (a deletion reads as empty)."""
    if from_revision > to_revision:
        raise InvalidArgument(
            f"fromRevision ({from_revision}) must not be after toRevision ({to_revision})"
        )
    old = await _markdown_or_empty(svc, who, scope, doc_id, from_revision)
    new = await _markdown_or_empty(svc, who, scope, doc_id, to_revision)
    allowed = svc.settings.limits.diff_max_lines
    for revision, text in ((from_revision, old), (to_revision, new)):
        lines = rev.line_count(text)
        if lines > allowed:
            raise QuotaExceeded(
                f"revision {revision} has {lines} lines; a diff compares revisions of at most "
                f"{allowed} lines (diffMaxLines): read the revisions instead",
                limit="diffMaxLines",
                allowed=allowed,
                lines=lines,
            )
    names = (f"revision {from_revision}", f"revision {to_revision}")
    # A line diff is superlinear in the lines it compares: never on the event loop.
    size = len(old) + len(new)
    return await svc.offload.run(size, rev.unified_diff, old, new, *names)


async def _markdown_or_empty(
    svc: Services, who: Principal, scope: Scope, doc_id: str, revision: int
) -> str:
    try:
        doc = await read_revision(svc, who, scope, doc_id, revision, None)
    except NotFound as e:
        if "deletion" not in str(e):
            raise
        return ""
    assert doc is not None
    return export(doc)


def export(document: Document) -> str:
    pairs = list(zip((c.text for c in document.chunks), document.separators, strict=True))
    return markdown.export(document.preamble, pairs)


async def restore(
    svc: Services, who: Principal, scope: Scope, doc_id: str, revision: int
) -> Document:
    """Write a new revision equal to revision ``revision`` (of a live or a deleted document);
    chunks that are the same keep their ids, restored ones get their old ids and mentions
    back."""
    ref = resolve_scope(who, scope)
    check_id(doc_id, "id")
    db = svc.db.scoped(ref)
    long: passages.Embedded | None = None
    if svc.settings.recall.passage_max > 0:
        # The restored texts' passages are embedded before the write transaction, as an
        # edit's are: the model never runs while the document's lock is held (a revision's
        # texts do not change, so what is read here is what the transaction writes).
        async def texts(tx: ScopedTx) -> list[str]:
            params = {"id": doc_id, "revision": revision, "gap": rev.SEQ_GAP, "embeddings": False}
            return [r["chunk"]["text"] for r in await tx.run(q.READ_REVISION_CHUNKS, params)]

        long = await passages.embed(svc, await db.read_tx(texts))

    async def work(tx: ScopedTx) -> Written | None:
        locked = await lock(tx, svc, doc_id)
        if locked is None:
            raise NotFound("document not found")
        doc = locked["document"]
        if not 1 <= revision <= int(doc["revision"]):
            raise NotFound(f"the document has no revision {revision}")
        retention.check_document_past(doc, revision, None)  # the lock holds sweeps off
        head = await _head(tx, {**doc, "id": doc_id}, revision)
        if head["deleted"]:
            raise NotFound(f"revision {revision} is the document's deletion")
        params = {"id": doc_id, "revision": revision, "gap": rev.SEQ_GAP, "embeddings": True}
        rows = await tx.run(q.READ_REVISION_CHUNKS, params)
        index = {r["chunk"]["id"]: i for i, r in enumerate(rows)}
        targets = [
            rev.Target(
                rev.Content(
                    r["chunk"]["type"],
                    r["chunk"]["text"],
                    r["chunk"]["separator"],
                    r["chunk"]["level"],
                    r["chunk"]["language"],
                ),
                index.get(r["parent_id"]) if r["parent_id"] is not None else None,
                r["chunk"]["id"],
                r["chunk"]["seq"],
            )
            for r in rows
        ]
        vectors = {r["chunk"]["text"]: r["embedding"] for r in rows if r["embedding"]}
        written = await write_revision(
            tx,
            svc,
            who,
            locked,
            targets,
            vectors,
            head["preamble"] or "",
            head["title"],
            head["path"],
            always=True,
            long=long,
        )
        await revision_mentions.restore(tx, doc_id, revision, list(index))
        return written

    await db.write_tx(work)
    found = await read_revision(svc, who, scope, doc_id, None, None)
    if found is None:  # deleted again since
        raise NotFound("document not found")
    return found
