"""Passages: the windows of a long chunk's text that get vectors of their own.

The embedding model reads only the start of a text (all-MiniLM-L6-v2: 256 word pieces, about
1,000 characters); the rest of a long chunk is invisible to the vector leg. So a chunk longer
than one window keeps its own vector (the head window, as the model truncates it) and gets one
more vector per further window, each overlapping the one before so a sentence cut by a window's
edge is whole in the next. The chunk itself stays one row: one id, one hit, its text byte-exact;
a passage is only a place in that text (``start``/``end`` character offsets) and a vector.

Windows are cut at whitespace when there is some near the nominal edge, so a word is never
split; a text without whitespace (a pasted blob) is cut where it falls. At most ``most``
passages per chunk: past them the tail is reached by the full-text leg only.
"""

from __future__ import annotations

from dataclasses import dataclass

# How far a window's edge may move to land on whitespace, as a share of the window.
_SNAP_SHARE = 10


@dataclass(frozen=True, slots=True)
class Window:
    """One passage of a chunk: its place among the chunk's passages (1 is the first after
    the head) and its character offsets in the chunk's text (``end`` exclusive)."""

    seq: int
    start: int
    end: int


def windows(text: str, size: int, overlap: int, most: int) -> list[Window]:
    """The passages of ``text`` beyond its head window, in order; none for a text that fits
    in one window (or with ``most`` 0)."""
    if most <= 0 or len(text) <= size:
        return []
    # At least half a window forward each time, whatever the overlap asked.
    stride = max(size - overlap, (size + 1) // 2)
    snap = max(size // _SNAP_SHARE, 1)
    out: list[Window] = []
    start = 0
    end = _edge(text, size, snap)
    while end < len(text) and len(out) < most:
        # Never past the previous end: a window snapped back at whitespace would otherwise
        # leave the characters between them in no window.
        start = _start(text, min(max(end - overlap, start + stride), end), snap, end)
        end = _edge(text, start + size, snap)
        out.append(Window(len(out) + 1, start, end))
    return out


def _edge(text: str, nominal: int, snap: int) -> int:
    """A window's end at or before ``nominal``: just after the last whitespace within
    ``snap`` characters of it, else ``nominal`` itself (or the text's end)."""
    if nominal >= len(text):
        return len(text)
    cut = max(text.rfind(" ", nominal - snap, nominal), text.rfind("\n", nominal - snap, nominal))
    return cut + 1 if cut > 0 else nominal


def _start(text: str, nominal: int, snap: int, limit: int) -> int:
    """A window's start at or after ``nominal`` (never at or past ``limit``, the previous
    window's end): the first character after whitespace within ``snap`` characters."""
    for i in range(nominal, min(nominal + snap, limit - 1, len(text) - 1)):
        if text[i].isspace() and not text[i + 1].isspace():
            return i + 1
    return nominal


def text_of(text: str, window: Window) -> str:
    return text[window.start : window.end]
