"""Passages of long chunks, written beside them: ``domain/documents/passages.py`` cuts the
windows, ``cypher/passages.py`` stores them.

A write that makes or changes chunks embeds their passages with its other vectors, before its
transaction (``embed``), then writes them after the chunks, in the same transaction
(``write``): a long chunk is never committed without them. A path that did not embed them
first (an edit of one chunk, a restore, a portability import) gets them embedded there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from palimpsest.cypher import passages as q
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.domain.documents import passages as windows
from palimpsest.resolvers.services import Services

# Each text's passages as the statement writes them: seq, start_char, end_char, text, embedding.
Embedded = Mapping[str, list[dict[str, Any]]]


async def embed(svc: Services, texts: Iterable[str]) -> dict[str, list[dict[str, Any]]]:
    """The passages of every long text among ``texts``, embedded (one model call in all);
    a text that fits in one window maps to no passages."""
    s = svc.settings
    cut = {
        t: windows.windows(
            t, s.recall.passage_chars, s.recall.passage_overlap, s.recall.passage_max
        )
        for t in set(texts)
    }
    pieces = [(t, w) for t, ws in cut.items() for w in ws]
    vectors = await svc.embed([windows.text_of(t, w) for t, w in pieces]) if pieces else []
    out: dict[str, list[dict[str, Any]]] = {t: [] for t in cut}
    for (t, w), vector in zip(pieces, vectors, strict=True):
        out[t].append(
            {
                "seq": w.seq,
                "start_char": w.start,
                "end_char": w.end,
                "text": windows.text_of(t, w),
                "embedding": vector,
            }
        )
    return out


async def write(
    tx: ScopedTx,
    svc: Services,
    chunks: Sequence[tuple[str, str]],
    embedded: Embedded | None = None,
    replace: bool = False,
) -> int:
    """Write the passages of ``chunks`` (id, text), already written in ``tx``; ``embedded``:
    what ``embed`` made before the transaction (texts missing there are embedded now).
    ``replace``: the chunks may have had passages of an earlier text (an edit), which go;
    new chunks with short texts need no statement. Answers the passages written."""
    known = dict(embedded or {})
    missing = [t for _, t in chunks if t not in known]
    if missing:
        known.update(await embed(svc, missing))
    rows = [{"chunk_id": i, "passages": known[t]} for i, t in chunks if replace or known[t]]
    if not rows:
        return 0
    [row] = await tx.run(q.WRITE_PASSAGES, {"rows": rows})
    return int(row["written"])


async def drop(tx: ScopedTx, chunk_ids: Sequence[str]) -> None:
    """Remove the passages of chunks that were deleted or closed in ``tx``."""
    if chunk_ids:
        await tx.run(q.DELETE_PASSAGES, {"ids": list(chunk_ids)})
