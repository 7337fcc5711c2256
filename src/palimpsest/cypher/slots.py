"""Embedding slots: where a row's vectors live, so a second model can be built beside the first.

A database holds at most two embedding models at once, each in a *slot*: slot ``a`` keeps its
vectors in the ``embedding`` property and the ``memory_embedding``, ``chunk_embedding`` and
``fact_embedding`` indexes; slot ``b`` in ``embedding_b`` and the same index names ending in
``_b``. One slot is *active* (what recall reads and writes write); during a model migration
(``palimpsest reembed``) the other slot is filled with the new model's vectors, and a cutover
makes it the active one. An index only ever holds the vectors of one model: a slot's indexes
are made for its model when a migration starts and dropped with its vectors.

Scoped statements are written against slot ``a`` (``x.embedding``, ``memory_embedding``).
When slot ``b`` is active, the executor runs each one with those names replaced here, and
renames the ``embedding`` keys inside its parameter maps to match, so ``SET c = chunk`` or
``x.embedding = r.embedding`` write the active slot. Top-level parameter names (``$embedding``)
are left alone: the text keeps them. The substitution is fixed (no value reaches the text).
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, Literal, LiteralString

Slot = Literal["a", "b"]
SLOTS: tuple[Slot, Slot] = ("a", "b")
PROPERTY: dict[Slot, str] = {"a": "embedding", "b": "embedding_b"}

_PROPERTY = re.compile(r"(?<=\.)embedding\b")
_INDEX = re.compile(r"\b(memory|chunk|fact)_embedding\b")


def other(slot: Slot) -> Slot:
    return "b" if slot == "a" else "a"


def parse(value: object) -> Slot:
    """A slot as the schema record stores it (absent on databases made before slots: ``a``)."""
    return "b" if value == "b" else "a"


@cache
def text_on(text: LiteralString, slot: Slot) -> LiteralString:
    """A scoped statement's text with slot ``a``'s names replaced by ``slot``'s."""
    if slot == "a":
        return text
    # The same literal with a fixed substitution: nothing from a caller reaches it.
    return _INDEX.sub(r"\1_embedding_b", _PROPERTY.sub("embedding_b", text))


def params_on(params: dict[str, Any], slot: Slot) -> dict[str, Any]:
    """The parameters with every nested ``embedding`` key renamed for ``slot`` (a new dict;
    the caller's maps are not changed)."""
    if slot == "a":
        return params
    return {k: _renamed(v) for k, v in params.items()}


def _renamed(value: Any) -> Any:
    if isinstance(value, dict):
        return {("embedding_b" if k == "embedding" else k): _renamed(v) for k, v in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict | list):
        return [_renamed(v) for v in value]
    return value
