"""Packing cited pieces of text into a token budget (``context``, docs/reference/context.md).

Pure: a piece is a citation (``[note:key]``) and a body; the packer takes pieces in the order
given, each whole if it fits, else its longest run of whole sentences that fits, else none of
it, and goes on with the next piece (a later, shorter one may still fit). Nothing is ever cut
inside a sentence. Tokens come from ``count`` (the embedding model's tokenizer), and the
block as a whole is counted again at the end, so ``tokens`` is the block's own count.

Each piece is one line, whatever its body holds: a backslash is written ``\\\\``, a line feed
``\\n``, a carriage return ``\\r``, and every other character ``str.splitlines`` breaks on as
``\\uXXXX``, so the block's lines are its pieces, one for one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Count = Callable[[Sequence[str]], list[int]]
SEPARATOR = "\n"
# A sentence ends at ., ! or ? (closing quotes and brackets included) before white space, or
# at a line break: a list item or a heading is a sentence of its own.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]\u201d\u2019]*\s+|\n+")
_ESCAPES = str.maketrans(
    {
        "\\": "\\\\",
        "\n": "\\n",
        "\r": "\\r",
        **{c: f"\\u{ord(c):04x}" for c in "\v\f\x1c\x1d\x1e\x85\u2028\u2029"},
    }
)


@dataclass(frozen=True, slots=True)
class Piece:
    cite: str  # e.g. "[note:prefs/editor]"
    body: str


@dataclass(frozen=True, slots=True)
class Packed:
    index: int  # the piece's place in the input
    line: str  # the citation and the body, or the body's first whole sentences
    tokens: int
    cut: bool  # only its first sentences fitted


@dataclass(frozen=True, slots=True)
class Block:
    text: str
    tokens: int
    truncated: bool  # a piece was cut at a sentence boundary or left out
    packed: tuple[Packed, ...]


def sentences(text: str) -> list[str]:
    """The prefixes of ``text`` that end at a sentence boundary, shortest first; the last is
    the whole text (stripped)."""
    body = text.strip()
    ends = [m.end() for m in _SENTENCE_END.finditer(body)]
    cuts = [body[:end].rstrip() for end in ends] + [body]
    keep = [c for c in dict.fromkeys(cuts) if c and c[-1] not in ",;:"]
    return keep or [body]


def pack(pieces: Sequence[Piece], budget: int, count: Count) -> Block:
    taken: list[Packed] = []
    used = 0
    truncated = False
    lines = [_line(p.cite, p.body) for p in pieces]
    counts = count(lines) if lines else []  # one batch: the tokenizer runs in parallel
    [separator] = count([SEPARATOR])
    for i, (piece, whole, tokens) in enumerate(zip(pieces, lines, counts, strict=True)):
        sep = separator if taken else 0
        room = budget - used - sep
        if tokens <= room:
            taken.append(Packed(i, whole, tokens, cut=False))
            used += sep + tokens
            continue
        truncated = True
        fitted = _first_sentences(i, piece, room, count)
        if fitted is not None:
            taken.append(fitted)
            used += sep + fitted.tokens
    return _settle(taken, budget, count, truncated)


def _first_sentences(index: int, piece: Piece, room: int, count: Count) -> Packed | None:
    prefixes = sentences(piece.body)[:-1]  # the whole body did not fit
    if not prefixes or room <= 0:
        return None
    lines = [_line(piece.cite, p) for p in prefixes]
    best = None
    for line, tokens in zip(lines, count(lines), strict=True):
        if tokens > room:
            break
        best = Packed(index, line, tokens, cut=True)
    return best


def _settle(taken: list[Packed], budget: int, count: Count, truncated: bool) -> Block:
    """The block, counted whole; a tokenizer whose counts do not add up across the separator
    loses pieces from the end until the block fits."""
    while True:
        text = SEPARATOR.join(p.line for p in taken)
        [tokens] = count([text]) if text else [0]
        if tokens <= budget or not taken:
            return Block(text, tokens, truncated, tuple(taken))
        taken = taken[:-1]
        truncated = True


def one_line(body: str) -> str:
    """``body`` stripped, on one line: backslashes and line breaks escaped."""
    return body.strip().translate(_ESCAPES)


def _line(cite: str, body: str) -> str:
    return f"{cite} {one_line(body)}"
