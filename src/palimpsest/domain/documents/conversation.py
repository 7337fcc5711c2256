"""Conversation documents, the pure parts: ids, titles, turn text and reading-order edges."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from itertools import pairwise

from palimpsest.domain.documents.markdown import ChunkType

TURN_TYPE = ChunkType.TURN.value
KIND = "conversation"
PATH_PREFIX = "/conversations/"
SEPARATOR = "\n"  # export adds the line end a turn lacks: turns end up a blank line apart


def document_id(scope_key: str, session_id: str | None) -> str:
    """One conversation per session and scope: the id is derived, so writers converge on it."""
    raw = "\x1f".join(("conversation", scope_key, session_id or ""))
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def root_id(document: str) -> str:
    return hashlib.sha256(f"root\x1f{document}".encode()).hexdigest()[:32]


def title(session_id: str | None) -> str:
    return f"Conversation {session_id}" if session_id else "Conversation (no session)"


def path(session_id: str | None) -> str | None:
    """``/conversations/<session>``, unless the session id holds control characters."""
    if not session_id or any(ord(ch) < 0x20 for ch in session_id):
        return None
    return PATH_PREFIX + session_id


def turn_text(speaker: str | None, text: str) -> tuple[str, int]:
    """The chunk text of a span (``speaker: text``) and where the span's own text starts."""
    if not speaker:
        return text, 0
    prefix = f"{speaker}: "
    return prefix + text, len(prefix)


def relink(
    existing: Sequence[tuple[str, int]], added: Sequence[tuple[str, int]]
) -> tuple[list[list[str]], list[list[str]]]:
    """The ``NEXT`` edges to cut and to draw when ``added`` turns join ``existing`` ones.

    Turns are ``(id, index)``; reading order is by index. Only edges that change are listed,
    so appending at the end cuts nothing and draws one edge per new turn.
    """
    before = [i for i, _ in sorted(existing, key=lambda t: t[1])]
    after = [i for i, _ in sorted([*existing, *added], key=lambda t: t[1])]
    old = set(pairwise(before))
    new = set(pairwise(after))
    return [list(p) for p in sorted(old - new)], [list(p) for p in sorted(new - old)]
