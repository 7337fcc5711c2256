"""Mentions across a document's revisions (docs/reference/documents.md, Mentions across
revisions): the past keeps its own mentions, the present follows its text.

An edit copies the chunk's mentions onto the closed version it writes (offsets into the old
text) and moves the current chunk's to where the text they mark now lies, dropping those
whose text is gone (``mention_places``). Mentions are drawn where they always were (a fact's
source, the consolidator's extractors); an edit draws none for a name it adds. A restore
gives each restored chunk the mentions of the version it restores.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from palimpsest.cypher import revision_mentions as q
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.domain.documents.mention_places import follow


@dataclass(frozen=True, slots=True)
class Edit:
    """A chunk an edit rewrote (its id kept), with its text before and after."""

    id: str
    old_text: str
    new_text: str


async def carry(tx: ScopedTx, doc_id: str, revision: int, edits: Sequence[Edit]) -> None:
    """After ``revision`` closed a version of each edited chunk: the version keeps the
    mentions, the chunk keeps those whose marked text its new text still holds."""
    if not edits:
        return
    texts = {e.id: e for e in edits}
    params = {"id": doc_id, "revision": revision, "ids": sorted(texts)}
    rows = await tx.run(q.COPY_MENTIONS_TO_VERSIONS, params)
    kept: dict[str, list[dict[str, Any]]] = {}
    moved: set[str] = set()
    for row in rows:
        edit = texts[row["chunk_id"]]
        props = dict(row["props"])
        start, end = props.get("start"), props.get("end")
        mentions = kept.setdefault(edit.id, [])
        if isinstance(start, int) and isinstance(end, int) and edit.old_text != edit.new_text:
            place = follow(edit.old_text, edit.new_text, start, end)
            if place != (start, end):
                moved.add(edit.id)
            if place is None:
                continue
            props["start"], props["end"] = place
        mentions.append({"entity_id": row["entity_id"], "props": props})
    if moved:
        replaced = [{"id": i, "mentions": kept[i]} for i in sorted(moved)]
        await tx.run(q.REPLACE_MENTIONS, {"rows": replaced})


async def restore(tx: ScopedTx, doc_id: str, restored: int, ids: Sequence[str]) -> None:
    """After a revision equal to ``restored`` was written: each chunk of ``ids`` that
    revision's version restores takes that version's mentions (the version keeps them)."""
    if ids:
        params = {"id": doc_id, "restored": restored, "ids": sorted(set(ids))}
        await tx.run(q.RESTORE_VERSION_MENTIONS, params)
