"""Writing a document revision (docs/decisions/0008-document-revisions.md), under the
document's lock: every change of a document (a chunk edit, a re-import to its path, a delete,
a restore) is one revision. Reading, paging, diffing and restoring are in
``document_revisions.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.cypher import quotas as qq
from palimpsest.cypher import revisions as q
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.documents import markdown
from palimpsest.domain.documents import revisions as rev
from palimpsest.embedding import Vector
from palimpsest.errors import Conflict
from palimpsest.identity import Principal
from palimpsest.resolvers import term_index
from palimpsest.resolvers.common import new_id, writer_params
from palimpsest.resolvers.documents import mentions as revision_mentions
from palimpsest.resolvers.documents import passages
from palimpsest.resolvers.documents.sources import forget_terms
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas


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
    long: passages.Embedded | None = None,
) -> Written | None:
    """Write the revision that turns the document (``locked``: LOCK_DOCUMENT's row) into
    ``targets``. ``vectors`` holds the embedding of every new text (by text). Nothing is
    written, and None answered, when nothing would change and ``always`` is false. What it
    adds is counted (chunks, the document's bytes, versions) and refused past a quota.
    ``long``: the passages of new long texts, embedded beforehand (``passages.embed``)."""
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
    ids = [new_id() for _ in targets]
    # Matching two large revisions' chunks is superlinear: off the event loop.
    size = sum(len(c.content.text) for c in current) + sum(len(t.content.text) for t in targets)
    plan = await svc.offload.run(size, rev.plan, current, targets, ids)
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
    edits: list[revision_mentions.Edit] = []
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
            edits.append(revision_mentions.Edit(p.id, old.content.text, t.content.text))
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
        await revision_mentions.carry(tx, doc_id, revision, edits)
    if created:
        await tx.run(q.CREATE_CHUNKS, {**params, "rows": created})
    if placed:
        await tx.run(q.PLACE_CHUNKS, {"rows": placed})
    # A closed chunk's passages go; a retexted one's are of its new text (or none).
    await passages.drop(tx, plan.closed)
    texts = {p.id: t.content.text for p, t in zip(plan.chunks, targets, strict=True)}
    await passages.write(tx, svc, [(i, texts[i]) for i in retext], long, replace=True)
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
    bump = {**params, **head, "deleted": deleted, "changed": changed}
    await tx.run(q.BUMP_DOCUMENT, bump)
    markdown_ = preamble + "".join(t.content.text + t.content.separator for t in targets)
    size = 0 if deleted else len(markdown_.encode())
    await tx.run(qq.STAMP_DOCUMENT_BYTES, {"id": doc_id, "bytes": size})
    grown = {
        quotas.Plane.CHUNKS: len(created),
        quotas.Plane.DOCUMENT_BYTES: size - int(doc.get("quota_bytes") or 0),
        # the revision it ends, and each chunk version it closes
        quotas.Plane.VERSIONS: 1 + len(edited) + len(plan.closed),
    }
    # A deletion is never refused for the versions it keeps (docs/reference/quotas.md).
    exempt = frozenset({quotas.Plane.VERSIONS}) if deleted else frozenset()
    await quotas.admit(tx, svc.settings, grown, exempt=exempt)
    touched = set(retext) | {i for pair in link for i in pair}
    if svc.settings.recall.fulltext_context:
        # A chunk's representation quotes its title and the headings above it (the chunks
        # under a retexted or moved one are refreshed with it): a new title, every chunk.
        touched |= {r["id"] for r in reparent}
        if title != doc["title"]:
            touched |= {p.id for p in plan.chunks}
    await term_index.refresh_chunks(tx, svc.settings, sorted(touched), svc.offload)
    return Written(revision, changed)


async def lock(tx: ScopedTx, svc: Services, doc_id: str) -> Row | None:
    rows = await tx.run(q.LOCK_DOCUMENT, {"id": doc_id, "now": svc.clock()})
    return rows[0] if rows else None


def targets_of(parsed: markdown.ParsedDocument) -> list[rev.Target]:
    return [
        rev.Target(rev.Content(c.type.value, c.text, c.separator, c.level, c.language), c.parent)
        for c in parsed.chunks
    ]
