"""The identity of a name: what makes two spellings of an entity, type or predicate one."""

from __future__ import annotations


def normalise(text: str) -> str:
    """Trim, collapse inner whitespace and fold case."""
    return " ".join(text.split()).casefold()
