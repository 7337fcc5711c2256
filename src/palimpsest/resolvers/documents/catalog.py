"""The documents plane (docs/spec.md, Planes): read, list, edit, delete and export documents.

Import lives in ``document_import``. Export is lossless: it joins each chunk's text and the
separator that followed it in reading order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest import paging
from palimpsest.cypher import documents as q
from palimpsest.cypher import quotas as qq
from palimpsest.cypher import revisions as rq
from palimpsest.cypher.driver.executor import Row, ScopedTx, Tx
from palimpsest.domain.documents import markdown, revisions
from palimpsest.errors import Conflict, InvalidArgument, NotFound
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers import term_index
from palimpsest.resolvers.common import check_id, provenance_from, writer_params
from palimpsest.resolvers.documents import mentions as revision_mentions
from palimpsest.resolvers.documents import passages
from palimpsest.resolvers.documents import revisions as document_revisions
from palimpsest.resolvers.documents.sources import Withdrawn, holder_scopes, withdraw_all
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas
from palimpsest.schema.models import Chunk, Document, DocumentSummary, Span

MAX_LIST_LIMIT = 500
LIST_NAME = "documents"
MAX_CHUNK_TEXT = 64 * 1024


async def list_documents(
    svc: Services, who: Principal, scope: Scope, path_prefix: str, limit: int, after: str | None
) -> paging.Page[DocumentSummary]:
    ref = resolve_scope(who, scope)
    paging.check_limit(limit, MAX_LIST_LIMIT)
    position = paging.decode(after, LIST_NAME, (paging.Part.ID,))
    params = {
        "path_prefix": path_prefix,
        "after": position[0] if position else "",
        "limit": limit + 1,
    }
    rows = await svc.db.scoped(ref).read(q.LIST_DOCUMENTS, params)
    found = [_summary(row["document"], row["chunk_count"], who) for row in rows]
    return paging.page(found, limit, LIST_NAME, lambda d: [d.id])


async def get_document(
    svc: Services,
    who: Principal,
    scope: Scope,
    doc_id: str,
    revision: int | None = None,
    known_at: datetime | None = None,
) -> Document | None:
    """The document, or None when the scope holds no such id (another scope's reads the same).
    With ``revision`` or ``known_at``: that revision, or the one current then
    (``document_revisions.read_revision``); a ``known_at`` in the future reads the present."""
    if revision is not None or (known_at is not None and known_at < svc.clock()):
        return await document_revisions.read_revision(svc, who, scope, doc_id, revision, known_at)
    ref = resolve_scope(who, scope)
    params = {"id": check_id(doc_id, "id")}

    async def work(tx: ScopedTx) -> tuple[list[Row], list[Row]]:
        return await tx.run(q.GET_DOCUMENT, params), await tx.run(q.GET_DOCUMENT_CHUNKS, params)

    docs, chunk_rows = await svc.db.scoped(ref).read_tx(work)
    if not docs:
        return None
    row = docs[0]["document"]
    chunks = [_chunk(r["chunk"], r["parent_id"], who) for r in chunk_rows]
    return Document(
        summary=_summary(row, len(chunks), who),
        preamble=row["preamble"] or "",
        chunks=chunks,
        separators=[r["chunk"]["separator"] for r in chunk_rows],
    )


def export_markdown(document: Document) -> str:
    pairs = list(zip((c.text for c in document.chunks), document.separators, strict=True))
    return markdown.export(document.preamble, pairs)


async def get_chunk(svc: Services, who: Principal, scope: Scope, chunk_id: str) -> Chunk | None:
    """The chunk, or None when the scope holds no such id (another scope's reads the same)."""
    ref = resolve_scope(who, scope)
    params = {"id": check_id(chunk_id, "id")}
    rows = await svc.db.scoped(ref).read(q.GET_CHUNK, params)
    return _chunk(rows[0]["chunk"], rows[0]["parent_id"], who) if rows else None


async def update_chunk(
    svc: Services, who: Principal, scope: Scope, chunk_id: str, text: str, revision: int
) -> Chunk:
    """Replace a chunk's text if ``revision`` is still current; a stale one is a CONFLICT."""
    ref = resolve_scope(who, scope)
    check_id(chunk_id, "id")
    if not text.strip():
        raise InvalidArgument("text must not be blank; delete the document to remove content")
    if len(text) > MAX_CHUNK_TEXT:
        raise InvalidArgument(f"text is {len(text)} characters; the limit is {MAX_CHUNK_TEXT}")
    [vector] = await svc.embed([text])
    long = await passages.embed(svc, [text])
    now = svc.clock()
    params: dict[str, Any] = {
        **writer_params(who),
        "id": chunk_id,
        "text": text,
        "revision": revision,
        "embedding": vector,
        "embedding_dual": None,  # the other slot's, during a migration (cypher/slots.py)
        "now": now,
        "gap": revisions.SEQ_GAP,
    }

    async def work(tx: ScopedTx) -> list[Row]:
        locked = await tx.run(q.LOCK_CHUNK_DOCUMENT, {"id": chunk_id, "now": now})
        if not locked:
            return []
        doc = locked[0]["document"]
        following = int(doc["revision"]) + 1
        rows = await tx.run(q.UPDATE_CHUNK, {**params, "next": following})
        if rows and rows[0]["fresh"]:
            head = {"title": doc["title"], "path": doc["path"], "preamble": doc["preamble"]}
            bump = {**params, **head, "id": doc["id"], "revision": following}
            await tx.run(rq.BUMP_DOCUMENT, {**bump, "deleted": False, "changed": 1})
            edit = revision_mentions.Edit(chunk_id, rows[0]["old_text"] or "", text)
            await revision_mentions.carry(tx, doc["id"], following, [edit])
            delta = len(text.encode()) - len((rows[0]["old_text"] or "").encode())
            await tx.run(qq.ADD_DOCUMENT_BYTES, {"id": doc["id"], "delta": delta})
            grown = {
                quotas.Plane.VERSIONS: 2,  # the revision it ends and the chunk's old text
                quotas.Plane.DOCUMENT_BYTES: delta,
            }
            await quotas.admit(tx, svc.settings, grown)
            # The chunk and its neighbours (whose representation quotes it) are re-indexed.
            await term_index.refresh_chunks(tx, svc.settings, [chunk_id])
            await passages.write(tx, svc, [(chunk_id, text)], long, replace=True)
        return rows

    rows = await svc.db.scoped(ref).write_tx(work)
    if not rows:
        raise NotFound("chunk not found")
    if not rows[0]["fresh"]:
        current = rows[0]["revision"]
        raise Conflict(
            f"chunk is at revision {current}, not {revision}; read it again and retry",
            revision=current,
        )
    chunk = await get_chunk(svc, who, scope, chunk_id)
    if chunk is None:  # deleted with its document since the edit
        raise NotFound("chunk not found")
    return chunk


@dataclass(frozen=True, slots=True)
class DeletedDocument:
    chunks: int
    withdrawn: Withdrawn


async def delete_document(
    svc: Services, who: Principal, scope: Scope, doc_id: str
) -> DeletedDocument:
    """Delete a document: a tombstone revision closes every chunk (they stay readable as the
    revisions before it, and restorable), and its sources are withdrawn from every fact they
    attest in the scopes the caller reaches; a fact goes with its last source."""
    resolve_scope(who, scope)
    check_id(doc_id, "id")
    [deleted] = await delete_documents(svc, who, scope, [doc_id])
    if deleted is None:
        raise NotFound("document not found")
    return deleted


async def delete_documents(
    svc: Services, who: Principal, scope: Scope, doc_ids: Sequence[str]
) -> list[DeletedDocument | None]:
    """``delete_document`` of each of ``doc_ids`` (checked ids), in one transaction: None
    for one missing or deleted already."""
    ref = resolve_scope(who, scope)
    holders = holder_scopes(who, ref)

    async def one(tx: Tx, doc_id: str) -> DeletedDocument | None:
        home = tx.scoped(ref)
        locked = await document_revisions.lock(home, svc, doc_id)
        if locked is None or locked["document"]["deleted_at"] is not None:
            return None
        doc = locked["document"]
        written = await document_revisions.write_revision(
            home,
            svc,
            who,
            locked,
            [],
            {},
            doc["preamble"] or "",
            doc["title"],
            doc["path"],
            deleted=True,
        )
        assert written is not None
        withdrawn = Withdrawn()
        for holder in holders:
            scoped = tx.scoped(holder)
            withdrawn += await withdraw_all(scoped, svc.settings, ref.scope_key, doc_id)
        return DeletedDocument(written.changed, withdrawn)

    async def work(tx: Tx) -> list[DeletedDocument | None]:
        return [await one(tx, doc_id) for doc_id in doc_ids]

    return await svc.db.write_tx(work)


def _summary(row: Row, chunk_count: int, reader: Principal) -> DocumentSummary:
    return DocumentSummary(
        id=row["id"],
        title=row["title"],
        path=row["path"],
        chunk_count=chunk_count,
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        provenance=provenance_from(row, reader),
        revision=int(row.get("revision") or 1),
    )


def _chunk(row: Row, parent_id: str | None, reader: Principal) -> Chunk:
    return Chunk(
        id=row["id"],
        document_id=row["document_id"],
        type=row["type"],
        text=row["text"],
        parent_id=parent_id,
        position=row["position"],
        index=row["index"],
        level=row["level"],
        language=row["language"],
        revision=row["revision"],
        span=Span(row["start_line"], row["end_line"], row["start_char"], row["end_char"]),
        observed_at=row["observed_at"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        provenance=provenance_from(row, reader),
    )
