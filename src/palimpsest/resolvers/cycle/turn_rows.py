"""What a span becomes in the database: a ``turn`` chunk of its session's conversation, and
the rows of the mentions drawn from it. The consolidator
(``consolidate.py``) decides when they are written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from palimpsest.config import Settings
from palimpsest.cypher import conversations as q
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.domain.documents import conversation
from palimpsest.domain.names import normalise
from palimpsest.embedding import Vector
from palimpsest.ontology.extractors import Mention, Turn
from palimpsest.resolvers import term_index
from palimpsest.resolvers.common import new_id
from palimpsest.resolvers.cycle import queue
from palimpsest.resolvers.tenant import quotas
from palimpsest.schema.turns import MentionRow, RunStamp, TurnRow
from palimpsest.workers.offload import Offload


async def write_turns(
    tx: ScopedTx,
    settings: Settings,
    session: str | None,
    group: Sequence[queue.LeasedSpan],
    turns: Sequence[Turn],
    vectors: Sequence[Vector],
    now: datetime,
    offload: Offload | None = None,
) -> str:
    """Append the group's turns to their session's conversation; its id. ``offload``: where
    a large batch's term indexing runs (off the event loop of a serving process)."""
    doc = conversation.document_id(tx.ref.scope_key, session)
    root = conversation.root_id(doc)
    first = group[0]
    [opened] = await tx.run(
        q.OPEN_CONVERSATION,
        {
            **stamp(first).params(),
            "id": doc,
            "root_id": root,
            "root_type": "document",
            "title": conversation.title(session),
            "path": conversation.path(session),
            "kind": conversation.KIND,
            "now": now,
        },
    )
    # A contiguous tail of the reading order, holding every turn a new one can sit next to
    # (and any of the group written before: their positions are not below the first).
    tail = await tx.run(q.CONVERSATION_TAIL, {"id": doc, "first": min(s.seq for s in group)})
    existing = [(r["id"], int(r["index"])) for r in tail]
    have = {i for i, _ in existing}
    index = {t.id: (t, v) for t, v in zip(turns, vectors, strict=True)}
    added = [s for s in group if s.id not in have]
    rows = [turn_row(s, *index[s.id]).params() for s in added]
    if rows:
        await tx.run(q.WRITE_TURNS, {"id": doc, "root_id": root, "turns": rows, "now": now})
    cut, draw = conversation.relink(existing, [(s.id, s.seq) for s in added])
    if cut:
        await tx.run(q.UNLINK_TURNS, {"pairs": cut})
    if draw:
        await tx.run(q.LINK_TURNS, {"pairs": draw})
    # Full-text representation and term statistics, neighbours included, in this transaction.
    await term_index.refresh_chunks(tx, settings, [s.id for s in added], offload)
    # Counted like an import: a refusal fails the batch, and the spans stay queued.
    grown = {
        quotas.Plane.CHUNKS: len(rows) + int(bool(opened["opened"])),
        quotas.Plane.DOCUMENT_BYTES: sum(len(str(r["text"]).encode()) for r in rows),
    }
    await quotas.admit(tx, settings, grown)
    return doc


def turn(span: queue.LeasedSpan) -> Turn:
    text, start = conversation.turn_text(span.speaker, span.text)
    return Turn(
        id=span.id,
        text=text,
        quote_start=start,
        speaker=span.speaker,
        role=span.role,
        observed_at=span.observed_at,
        session_id=span.run.session_id,
        facts=span.facts,
    )


def turn_row(span: queue.LeasedSpan, turn: Turn, vector: Vector) -> TurnRow:
    return TurnRow(
        id=span.id,
        type=conversation.TURN_TYPE,
        text=turn.text,
        separator=conversation.SEPARATOR,
        position=span.seq,
        end_line=turn.text.count("\n") + 1,
        embedding=vector,
        observed_at=span.observed_at,
        speaker=span.speaker,
        role=span.role,
        source_id=span.source_id,
        stamp=stamp(span),
    )


def mention_row(m: Mention, span: queue.LeasedSpan) -> MentionRow:
    return MentionRow(
        chunk_id=m.turn_id,
        type=normalise(m.type),
        name=" ".join(m.name.split()),
        norm=normalise(m.name),
        entity_id=new_id(),
        start=m.start,
        end=m.end,
        stamp=stamp(span),
    )


def stamp(span: queue.LeasedSpan) -> RunStamp:
    """Provenance of everything made from a span: the harvesting run, origin compaction."""
    return RunStamp.of(span.run, span.compaction_generation)


def sessions(spans: Sequence[queue.LeasedSpan]) -> dict[str | None, list[queue.LeasedSpan]]:
    groups: dict[str | None, list[queue.LeasedSpan]] = {}
    for span in spans:
        groups.setdefault(span.run.session_id, []).append(span)
    return groups
