"""Where a chunk's mention lies once an edit changes the chunk's text (no I/O).

A mention marks ``[start, end)`` of its chunk's text: the name the mentions extractor found
there, or the span a fact's source quotes. After an edit the current chunk's mention follows
the text it marked: the same characters, where the edit left them in place, or else their
occurrence nearest the old place; either must lie on word boundaries, as the extractor
matches names ("Ada" does not follow into "Adam"). When the marked text is gone, the current
chunk drops the mention; the closed version keeps it with its old offsets.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\w")


def follow(old: str, new: str, start: int, end: int) -> tuple[int, int] | None:
    """The place in ``new`` of what ``old[start:end]`` marked, or None when it is gone. Offsets
    that mark no text of ``old`` are kept as they are: there is nothing to follow."""
    if not 0 <= start < end <= len(old):
        return start, end
    marked = old[start:end]
    shift = _shift(old, new, start, end)
    if shift is not None and _bounded(new, start + shift, end + shift):
        return start + shift, end + shift
    best: int | None = None
    at = new.find(marked)
    while at >= 0:
        if _bounded(new, at, at + len(marked)) and (
            best is None or abs(at - start) < abs(best - start)
        ):
            best = at
        at = new.find(marked, at + 1)
    return None if best is None else (best, best + len(marked))


def _shift(old: str, new: str, start: int, end: int) -> int | None:
    """How far ``[start, end)`` moved when it lies wholly before or after the changed part
    (the text between the common prefix and the common suffix); None when the edit touched it."""
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    if end <= prefix:
        return 0
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    if start >= len(old) - suffix:
        return len(new) - len(old)
    return None


def _bounded(text: str, start: int, end: int) -> bool:
    """``text[start:end]`` neither begins nor ends inside a word."""
    inner_left = start > 0 and _word(text[start - 1]) and _word(text[start])
    inner_right = end < len(text) and _word(text[end - 1]) and _word(text[end])
    return not (inner_left or inner_right)


def _word(char: str) -> bool:
    return _WORD.match(char) is not None
