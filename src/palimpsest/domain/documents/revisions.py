"""Document revisions, pure: which chunks a new revision keeps, edits, creates and closes
(docs/decisions/0008-document-revisions.md).

Pure: no I/O. A revision is an ordered list of chunks. A chunk node is shared by every
revision it belongs to, so what may differ between revisions (reading-order index, position
among siblings, source span) is derived here from the order, never stored per revision. The
order itself is ``seq``, a sparse integer that never changes for a node: new chunks get a
``seq`` between their neighbours'. A chunk is *kept* (shared, nothing written but its present
index and span) only when its text, type, separator, level, language and parent are the same;
otherwise it is *edited* (the old content is archived as a closed version, the node keeps its
id), *created* or *closed*.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

SEQ_GAP = 1 << 20

# The line ends markdown.py counts (CRLF, a lone CR or LF).
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True, slots=True)
class Content:
    """What makes a chunk the same chunk: its text and the shape it was parsed into."""

    type: str
    text: str
    separator: str
    level: int | None
    language: str | None


@dataclass(frozen=True, slots=True)
class Current:
    """A chunk of the document's current revision, in reading order."""

    id: str
    content: Content
    parent_id: str | None  # None: at the top of the tree
    seq: int


@dataclass(frozen=True, slots=True)
class Target:
    """A chunk of the revision to write, in reading order. ``id``/``seq`` are given when the
    chunk comes from an earlier revision (a restore); ``parent`` indexes this list."""

    content: Content
    parent: int | None
    id: str | None = None
    seq: int | None = None


@dataclass(frozen=True, slots=True)
class Placed:
    """A chunk of the new revision, with its id, order and what the write does with it."""

    id: str
    seq: int
    parent_id: str | None
    action: str  # "keep" | "edit" | "create"
    index: int
    position: int


@dataclass(frozen=True, slots=True)
class Plan:
    chunks: list[Placed]
    closed: list[str]
    next_pairs: list[tuple[str, str]] = field(default_factory=list)

    @property
    def changed(self) -> int:
        """Chunks written or closed by this revision (what history calls changedChunks)."""
        return sum(1 for c in self.chunks if c.action != "keep") + len(self.closed)


@dataclass(frozen=True, slots=True)
class Span:
    start_line: int
    end_line: int
    start_char: int
    end_char: int


def plan(current: Sequence[Current], targets: Sequence[Target], ids: Sequence[str]) -> Plan:
    """The revision that turns ``current`` into ``targets``. ``ids`` supplies fresh ids for
    created chunks, in order (at least as many as ``targets``)."""
    fresh = iter(ids)
    by_id = {c.id: c for c in current}
    match: dict[int, Current] = {}  # target index -> the current chunk it continues
    if any(t.id is not None for t in targets):
        for i, t in enumerate(targets):
            if t.id is not None and t.id in by_id:
                match[i] = by_id[t.id]
    else:
        _match_by_content(current, targets, match)
    chosen: list[str] = []
    for i, t in enumerate(targets):
        if i in match:
            chosen.append(match[i].id)
        else:
            chosen.append(t.id if t.id is not None else next(fresh))
    parents = [None if t.parent is None else chosen[t.parent] for t in targets]
    seqs = _order(targets, match)
    placed: list[Placed] = []
    siblings: dict[str | None, int] = {}
    for i, t in enumerate(targets):
        old = match.get(i)
        if old is None:
            action = "create"
        elif old.content == t.content and old.parent_id == parents[i] and old.seq == seqs[i]:
            action = "keep"
        else:
            action = "edit"
        position = siblings.get(parents[i], 0)
        siblings[parents[i]] = position + 1
        placed.append(Placed(chosen[i], seqs[i], parents[i], action, i, position))
    kept = {p.id for p in placed}
    closed = [c.id for c in current if c.id not in kept]
    pairs = [(a.id, b.id) for a, b in itertools.pairwise(placed)]
    return Plan(placed, closed, pairs)


def _match_by_content(
    current: Sequence[Current], targets: Sequence[Target], match: dict[int, Current]
) -> None:
    """Equal runs are the same chunks; a replaced run pairs chunks of the same type in
    order (an edited paragraph keeps its id)."""
    a = [c.content for c in current]
    b = [t.content for t in targets]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            for k in range(i2 - i1):
                match[j1 + k] = current[i1 + k]
        elif op == "replace":
            for k in range(min(i2 - i1, j2 - j1)):
                if current[i1 + k].content.type == targets[j1 + k].content.type:
                    match[j1 + k] = current[i1 + k]


def _order(targets: Sequence[Target], match: dict[int, Current]) -> list[int]:
    """Each target's ``seq``: its own, or its match's, or one between its neighbours'. When
    the given ones are not increasing or a gap is full, every chunk is numbered afresh
    (those whose ``seq`` moves are then edited, so no earlier revision changes order)."""
    given: list[int | None] = []
    for i, t in enumerate(targets):
        if i in match:
            given.append(match[i].seq)
        else:
            given.append(t.seq)
    known = [s for s in given if s is not None]
    if any(x >= y for x, y in itertools.pairwise(known)):
        return [(i + 1) * SEQ_GAP for i in range(len(targets))]
    out: list[int] = []
    i = 0
    while i < len(given):
        g = given[i]
        if g is not None:
            out.append(g)
            i += 1
            continue
        j = i
        while j < len(given) and given[j] is None:
            j += 1
        low = out[-1] if out else 0
        after = given[j] if j < len(given) else None
        high = after if after is not None else low + (j - i + 1) * SEQ_GAP
        step = (high - low) // (j - i + 1)
        if step < 1:
            return [(k + 1) * SEQ_GAP for k in range(len(targets))]
        out.extend(low + step * (k + 1) for k in range(j - i))
        i = j
    return out


def spans(preamble: str, pieces: Sequence[tuple[str, str]]) -> list[Span]:
    """Each chunk's span in ``preamble + sum(text + separator)``: what parsing that
    revision's Markdown gives the chunk (lines 0-based, end exclusive)."""
    out: list[Span] = []
    char = len(preamble)
    line = len(_NEWLINE.findall(preamble))
    for text, separator in pieces:
        ends = len(_NEWLINE.findall(text))
        open_end = bool(text) and not text.endswith(("\n", "\r"))
        out.append(Span(line, line + ends + int(open_end), char, char + len(text)))
        char += len(text) + len(separator)
        line += ends + len(_NEWLINE.findall(separator))
    return out


def _lines(text: str) -> list[str]:
    """``text`` split after each line end markdown.py counts, ends kept."""
    out: list[str] = []
    at = 0
    for m in _NEWLINE.finditer(text):
        out.append(text[at : m.end()])
        at = m.end()
    if at < len(text):
        out.append(text[at:])
    return out


def line_count(text: str) -> int:
    """The lines ``_lines`` splits ``text`` into (a last line without a line end counts)."""
    ends = len(_NEWLINE.findall(text))
    return ends + int(bool(text) and not text.endswith(("\n", "\r")))


def unified_diff(old: str, new: str, old_name: str, new_name: str) -> str:
    """A unified diff of two Markdown texts; a last line without a line end is marked the
    way ``diff`` marks it, so the diff says exactly what changed."""
    out: list[str] = []
    for line in difflib.unified_diff(_lines(old), _lines(new), old_name, new_name):
        if line.endswith(("\n", "\r")):
            out.append(line)
        else:
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out)
