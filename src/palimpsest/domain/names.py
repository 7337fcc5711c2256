"""The identity of a name: what makes two spellings of an entity, type or predicate one."""

from __future__ import annotations

import unicodedata


def normalise(text: str) -> str:
    """Trim, collapse inner whitespace and fold case."""
    return " ".join(text.split()).casefold()


def fold(name: str) -> str:
    """A name with case, punctuation and whitespace folded away: "Acme, Inc." ~ "acme inc".

    Two entity names of one type that fold to the same text name one entity (the entity's
    ``name_key``); ``dedup`` compares fact objects the same way."""
    kept = "".join(" " if unicodedata.category(ch)[0] in "PZS" else ch for ch in name.casefold())
    return " ".join(kept.split())
