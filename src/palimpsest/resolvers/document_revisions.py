"""Document revisions (docs/decisions/0008-document-revisions.md): write a revision, read
any revision whole, page the history, diff two revisions, restore one.

Every change of a document (a chunk edit, a re-import to its path, a delete, a restore) is
one revision, written by ``write_revision`` under the document's lock. A past read never
writes anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest import markdown, paging
from palimpsest import revisions as rev
from palimpsest.cypher import revisions as q
from palimpsest.cypher.executor import Row, ScopedTx
from palimpsest.embedding import Vector
from palimpsest.errors import Conflict, InvalidArgument, NotFound
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers import term_index
from palimpsest.resolvers.common import check_id, new_id, provenance_from, writer_params
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.sources import forget_terms
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


@dataclass(frozen=True, slots=True)
class Written:
    revision: int
    changed: int


async def write_revision(
    tx: ScopedTx,
    svc: Services,
    who: Principal,
    locked: Row,
    targets: Sequence[rev.Target],
    vectors: Mapping[str, Vector],
    preamble: str,
    title: str | None,
    path: str | None,
    observed_at: datetime | None = None,
    *,
    deleted: bool = False,
    always: bool = False,
) -> Written | None:
    """Write the revision that turns the document (``locked``: LOCK_DOCUMENT's row) into
    ``targets``. ``vectors`` holds the embedding of every new text (by text). Nothing is
    written, and None answered, when nothing would change and ``always`` is false."""
    doc = locked["document"]
    doc_id = doc["id"]
    gap = {"gap": rev.SEQ_GAP}
    rows = await tx.run(q.READ_CURRENT, {"id": doc_id, **gap})
    current = [
        rev.Current(
            r["id"],
            rev.Content(r["type"], r["text"], r["separator"], r["level"], r["language"]),
            r["parent_id"],
            int(r["seq"]),
        )
        for r in rows
    ]
    plan = rev.plan(current, targets, [new_id() for _ in targets])
    same_head = (doc["preamble"] or "", doc["title"], doc["path"]) == (preamble, title, path)
    if not (always or deleted or doc["deleted_at"] is not None) and (
        plan.changed == 0 and same_head
    ):
        return None
    revision = int(doc["revision"]) + 1
    now = svc.clock()
    params: dict[str, Any] = {
        **writer_params(who),
        "id": doc_id,
        "revision": revision,
        "now": now,
        "observed_at": observed_at,
        **gap,
    }
    by_id = {c.id: c for c in current}
    if plan.closed:
        closing = [
            {"id": i, "seq": by_id[i].seq, "parent_id": by_id[i].parent_id} for i in plan.closed
        ]
        [closed] = await tx.run(q.CLOSE_CHUNKS, {**params, "rows": closing})
        await forget_terms(tx, svc.settings, "chunk", term_index.removed(closed["indexed"]))
    spans = rev.spans(preamble, [(t.content.text, t.content.separator) for t in targets])
    edited: list[dict[str, Any]] = []
    created: list[dict[str, Any]] = []
    placed: list[dict[str, Any]] = []
    reparent: list[dict[str, Any]] = []
    retext: list[str] = []
    for p, t, span in zip(plan.chunks, targets, spans, strict=True):
        place = {
            "index": p.index,
            "position": p.position,
            "seq": p.seq,
            "parent_id": p.parent_id,
            "start_line": span.start_line,
            "end_line": span.end_line,
            "start_char": span.start_char,
            "end_char": span.end_char,
        }
        placed.append({"id": p.id, "place": place})
        content = {
            "type": t.content.type,
            "text": t.content.text,
            "separator": t.content.separator,
            "level": t.content.level,
            "language": t.content.language,
        }
        old = by_id.get(p.id)
        if p.action == "keep":
            continue
        text_changed = old is None or old.content.text != t.content.text
        vector = vectors.get(t.content.text) if text_changed else None
        if text_changed and vector is None:
            raise Conflict("the document changed while this revision was prepared; retry")
        if text_changed:
            retext.append(p.id)
        if old is None:
            created.append({"id": p.id, "props": content | place, "embedding": vector})
        else:
            edited.append(
                {
                    "id": p.id,
                    "old_seq": old.seq,
                    "old_parent_id": old.parent_id,
                    "props": content | place,
                    "embedding": vector,
                }
            )
        if old is None or old.parent_id != p.parent_id:
            reparent.append({"id": p.id, "parent_id": p.parent_id, "position": p.position})
    if edited:
        await tx.run(q.EDIT_CHUNKS, {**params, "rows": edited})
    if created:
        await tx.run(q.CREATE_CHUNKS, {**params, "rows": created})
    if placed:
        await tx.run(q.PLACE_CHUNKS, {"rows": placed})
    existing = {(r["a"], r["b"]) for r in await tx.run(q.READ_NEXT, {"id": doc_id})}
    wanted = set(plan.next_pairs)
    unlink = sorted(existing - wanted)
    link = sorted(wanted - existing)
    relink = {
        "reparent": reparent,
        "unlink": [list(x) for x in unlink],
        "link": [list(x) for x in link],
        "root_id": locked["root_id"],
    }
    await tx.run(q.RELINK, relink)
    head = {"title": title, "path": path, "preamble": preamble}
    changed = plan.changed
    await tx.run(q.BUMP_DOCUMENT, {**params, **head, "deleted": deleted, "changed": changed})
    touched = set(retext) | {i for pair in link for i in pair}
    await term_index.refresh_chunks(tx, svc.settings, sorted(touched))
    return Written(revision, changed)


async def lock(tx: ScopedTx, svc: Services, doc_id: str) -> Row | None:
    rows = await tx.run(q.LOCK_DOCUMENT, {"id": doc_id, "now": svc.clock()})
    return rows[0] if rows else None


def targets_of(parsed: markdown.ParsedDocument) -> list[rev.Target]:
    return [
        rev.Target(rev.Content(c.type.value, c.text, c.separator, c.level, c.language), c.parent)
        for c in parsed.chunks
    ]


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
        return await _document(tx, who, doc, head, wanted)

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
    position = paging.decode(after, HISTORY_NAME, (paging.Part.TEXT,))
    before = 2**62
    if position:
        if not str(position[0]).isdigit():
            raise InvalidArgument("after is not a cursor of this list")
        before = int(position[0])
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
    return rev.unified_diff(old, new, f"revision {from_revision}", f"revision {to_revision}")


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
    chunks that are the same keep their ids, restored ones get their old ids back."""
    ref = resolve_scope(who, scope)
    check_id(doc_id, "id")
    db = svc.db.scoped(ref)

    async def work(tx: ScopedTx) -> Written | None:
        locked = await lock(tx, svc, doc_id)
        if locked is None:
            raise NotFound("document not found")
        doc = locked["document"]
        if not 1 <= revision <= int(doc["revision"]):
            raise NotFound(f"the document has no revision {revision}")
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
        return await write_revision(
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
        )

    await db.write_tx(work)
    found = await read_revision(svc, who, scope, doc_id, None, None)
    if found is None:  # deleted again since
        raise NotFound("document not found")
    return found
