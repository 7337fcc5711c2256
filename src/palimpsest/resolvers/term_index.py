"""Keeping a scope's full-text representation and term statistics in step with its rows.

Every write of a recallable row (note, chunk, fact) stores the row's full-text
representation (``ft`` terms, ``ft_tf`` frequencies, ``ft_len``) and its cues (years, time
expression, speaker), and adds its change to the scope's ``:TermStats`` in the same
transaction, so the statistics never disagree with the rows a reader can see.

``refresh_chunks`` is the general entry point for chunks written or edited outside document
import (an edited chunk, turns appended to a conversation by the consolidator): it rebuilds
the representation of the given chunks and of their reading-order neighbours from the
``NEXT`` chain, and applies the difference to the statistics.
"""

from __future__ import annotations

import secrets
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher import documents as dq
from palimpsest.cypher import terms as q
from palimpsest.cypher.driver.executor import ScopedDatabase, ScopedTx, Statement
from palimpsest.domain.documents.markdown import ChunkType
from palimpsest.domain.ranking import cues, fulltext
from palimpsest.domain.ranking.fulltext import StatsDelta, Stored
from palimpsest.domain.time import timerefs
from palimpsest.workers.offload import Offload

HEADING = ChunkType.HEADING.value


def row_fields(text: str) -> dict[str, Any]:
    """The stored representation and cues of a note or a fact (no neighbourhood)."""
    return {**Stored.of(fulltext.bag(text)).params(), **cues.row_cues(text).params()}


def chunk_fields(
    texts: Sequence[str],
    neighbours: bool,
    observed: datetime | None = None,
    contexts: Sequence[Counter[str] | None] | None = None,
    max_terms: int = 0,
) -> list[dict[str, Any]]:
    """Representations and cues of a document's chunks, given in reading order, with their
    time expressions resolved against the document's ``observed`` time; ``contexts``: each
    chunk's title-and-headings terms (``heading_contexts``), None when the lever is off;
    ``max_terms``: the neighbourhood's limit (``fulltext.neighbourhood``, 0: none)."""
    reps = fulltext.sequence_bags(texts, neighbours, contexts, max_terms)
    return [
        {**Stored.of(rep).params(), **chunk_cues(text, observed)}
        for text, rep in zip(texts, reps, strict=True)
    ]


def heading_contexts(
    title: str | None, chunks: Sequence[tuple[str, str, int | None]]
) -> list[Counter[str]]:
    """Per chunk, given as (type, text, parent index) in reading order, the context its
    full-text representation carries: the terms of the document's ``title`` and of every
    heading above it in the chunk tree (a heading's own text is not its context)."""
    out: list[Counter[str]] = []
    for _, _, parent in chunks:
        above: list[str] = []
        at = parent
        while at is not None:
            kind, text, up = chunks[at]
            if kind == HEADING:
                above.append(text)
            at = up
        out.append(fulltext.context_bag([title, *above]))
    return out


def chunk_cues(text: str, observed: datetime | None) -> dict[str, Any]:
    """A chunk's cues: those of every row, and its resolved time ranges (``t_start``,
    ``t_end``: parallel lists of epoch days, absent when it names none)."""
    return {**cues.row_cues(text).params(), **timerefs.params(timerefs.resolve(text, observed))}


def added(fields: Sequence[dict[str, Any]]) -> StatsDelta:
    """The statistics change of new rows, from their stored fields."""
    delta = StatsDelta()
    for f in fields:
        delta.add(fulltext.stored_bag(f["ft"], f["ft_tf"]), 1, f.get("speaker"))
    return delta


def removed(rows: Sequence[dict[str, Any]]) -> StatsDelta:
    """The statistics change of deleted rows (``ft``, ``ft_tf``, ``speaker`` as stored)."""
    delta = StatsDelta()
    for r in rows:
        delta.add(fulltext.stored_bag(r.get("ft"), r.get("ft_tf")), -1, r.get("speaker"))
    return delta


async def apply(tx: ScopedTx, settings: Settings, kind: str, delta: StatsDelta) -> None:
    """Add ``delta`` to the transaction's scope, on one random shard, in term order, and drop
    the terms it took to nothing. Readers sum every shard, so changing the number of shards
    needs no migration."""
    params = change_params(settings, kind, delta)
    if params["changes"]:
        await tx.run(q.APPLY_TERM_STATS, params)
        await prune(tx, params["changes"])


async def prune(tx: ScopedTx, changes: Sequence[dict[str, Any]]) -> None:
    """After ``changes`` were applied in ``tx``: drop the statistics of every term they
    lowered that no row of the scope holds any more, so no count keeps a deleted or
    overwritten word (the kind's totals row too, once the kind has no row)."""
    pruned = lowered(changes)
    if pruned:
        await tx.run(q.PRUNE_TERM_STATS, {"pruned": pruned})


def lowered(changes: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``$pruned`` of ``PRUNE_TERM_STATS`` (cypher/terms.py ``PRUNE_CHANGES``): the terms
    whose count ``changes`` lower, which may have reached zero."""
    return [{"kind": c["kind"], "term": c["term"]} for c in changes if c["df"] < 0]


def change_params(settings: Settings, kind: str, delta: StatsDelta) -> dict[str, Any]:
    """``$changes`` and ``$shard`` for ``APPLY_TERM_STATS``, or for a write statement that
    applies them itself (cypher/terms.py ``APPLY_CHANGES``)."""
    return {"changes": delta.changes(kind), "shard": shard(settings)}


def shard(settings: Settings) -> int:
    """A random shard of the statistics for one write's changes."""
    return secrets.randbelow(settings.recall.fulltext_stats_shards)


def document_fields(
    title: str | None,
    tree: Sequence[tuple[str, str, int | None]],
    neighbours: bool,
    context: bool,
    observed: datetime | None,
    max_terms: int = 0,
) -> tuple[list[dict[str, Any]], StatsDelta]:
    """A new document's chunks, given as (type, text, parent index) in reading order: their
    stored fields (``chunk_fields``) and the statistics change of adding them. Pure, and
    proportional to the document: run through ``Services.offload``."""
    contexts = heading_contexts(title, tree) if context else None
    texts = [text for _, text, _ in tree]
    fields = chunk_fields(texts, neighbours, observed, contexts, max_terms)
    return fields, added(fields)


def merged(deltas: Sequence[StatsDelta]) -> StatsDelta:
    """One statistics change adding up ``deltas`` (of distinct new rows)."""
    out = StatsDelta()
    for d in deltas:
        out.rows += d.rows
        out.length += d.length
        out.df.update(d.df)
        out.speakers.update(d.speakers)
        for term, (tf, ratio) in d.peaks.items():
            was_tf, was_ratio = out.peaks.get(term, (0, 0.0))
            out.peaks[term] = (max(tf, was_tf), max(ratio, was_ratio))
    return out


async def refresh_chunks(
    tx: ScopedTx, settings: Settings, ids: Sequence[str], offload: Offload | None = None
) -> int:
    """Rebuild the full-text representation of chunks ``ids`` (new or edited, already linked
    by ``NEXT``) and of their neighbours (and, with the title-and-headings context on, of the
    chunks below them in the tree, whose context quotes them), set the cues of ``ids``, and
    apply the difference to the scope's statistics. Returns the number of chunks rewritten.
    With ``offload``, a large rebuild runs off the event loop."""
    if not ids:
        return 0
    on = settings.recall.fulltext_neighbours
    context = settings.recall.fulltext_context
    most = settings.recall.fulltext_neighbours_max_terms
    params = {"ids": list(ids), "below": context, "heading": ChunkType.HEADING.value}
    rows = [
        {**r, "observed_at": _observed(r.get("observed_at"))}
        for r in await tx.run(dq.READ_CHUNK_CONTEXT, params)
    ]
    own = set(ids)
    if offload is None:
        writes, delta = rebuilt(rows, own, on, context, most)
    else:
        size = sum(len(r["text"] or "") for r in rows)
        writes, delta = await offload.run(size, rebuilt, rows, own, on, context, most)
    if writes:
        await tx.run(dq.WRITE_CHUNK_TERMS, {"rows": writes})
    await apply(tx, settings, "chunk", delta)
    return len(writes)


def rebuilt(
    rows: Sequence[dict[str, Any]], own: set[str], on: bool, context: bool, max_terms: int = 0
) -> tuple[list[dict[str, Any]], StatsDelta]:
    """``refresh_chunks``'s pure part: from ``READ_CHUNK_CONTEXT``'s rows, the chunks'
    new fields and the statistics change (``max_terms``: the neighbourhood's limit)."""
    delta = StatsDelta()
    writes: list[dict[str, Any]] = []
    for r in rows:
        rep = fulltext.neighbourhood(
            fulltext.bag(r["text"] or ""),
            fulltext.bag(r["prev"]) if r["prev"] is not None else None,
            fulltext.bag(r["next"]) if r["next"] is not None else None,
            on,
            fulltext.context_bag([r["title"], *r["headings"]]) if context else None,
            max_terms,
        )
        old = fulltext.stored_bag(r["ft"], r["ft_tf"]) if r["indexed"] else None
        props: dict[str, Any] = Stored.of(rep).params()
        if r["id"] in own:
            cue = cues.row_cues(r["text"] or "")
            props |= chunk_cues(r["text"] or "", _observed(r.get("observed_at")))
            if r["speaker"] != cue.speaker:
                if r["indexed"] and r["speaker"]:
                    delta.speakers[r["speaker"]] -= 1
                if cue.speaker:
                    delta.speakers[cue.speaker] += 1
        elif not r["indexed"]:
            props |= chunk_cues(r["text"] or "", _observed(r.get("observed_at")))
            if props["speaker"]:
                delta.speakers[props["speaker"]] += 1
        if old is None:
            delta.add(rep)
        elif old != rep:
            delta.replace(old, rep)
        elif r["id"] not in own:
            continue
        writes.append({"id": r["id"], "props": props})
    return writes, delta


def _observed(value: Any) -> datetime | None:
    """A stored ``observed_at`` as a datetime (the executor converts the driver's own)."""
    if value is None or isinstance(value, datetime):
        return value
    native: datetime = value.to_native()
    return native


def replaced(old: dict[str, Any] | None, new: dict[str, Any] | None) -> StatsDelta:
    """One note's change: ``old``/``new`` are stored fields, None when there is no row."""
    delta = StatsDelta()
    before = None
    if old is not None and old.get("ft_len") is not None:
        before = fulltext.stored_bag(old["ft"], old["ft_tf"])
        delta.add(before, -1, old.get("speaker"))
    if new is not None:
        delta.add(fulltext.stored_bag(new["ft"], new["ft_tf"]), 1, new.get("speaker"), before)
    return delta


PEAK_SCANS: dict[str, Statement] = {
    "memory": q.PEAKS_MEMORY,
    "chunk": q.PEAKS_CHUNKS,
    "fact": q.PEAKS_FACTS,
}
PEAKS_PER_WRITE = 5000


async def backfill_peaks(db: ScopedDatabase) -> dict[str, int]:
    """Give the scope's statistics written before peaks were kept (their terms get the loose
    bound, so full-text recall reads more rows) the peaks of the rows it holds; returns the
    terms bounded per kind. Safe beside writers: the scan is a read, and a row written after
    it raised its terms' peaks itself (peaks only grow), which the writes here keep. A scope
    with nothing to do costs one small read per kind."""
    done: dict[str, int] = {}
    for kind, scan in PEAK_SCANS.items():
        [unbounded] = await db.read(q.COUNT_UNBOUNDED, {"kind": kind})
        if not unbounded["n"]:
            continue
        peaks = await db.read(scan, {"space": " "})
        terms = 0
        for i in range(0, len(peaks), PEAKS_PER_WRITE):
            params = {"kind": kind, "peaks": peaks[i : i + PEAKS_PER_WRITE]}
            terms += (await db.write(q.SET_PEAKS, params))[0]["terms"]
        terms += (await db.write(q.BOUND_THE_REST, {"kind": kind}))[0]["terms"]
        done[kind] = terms
    return done
