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

During a migration a write embeds with both models (``DualVector``): the executor then puts,
beside each ``embedding`` it finds in the parameters, the other slot's vector and its
fingerprint (``<slot property>_of``, the first two components of the vector it was made
beside, as the worker writes them: ``cypher/embedding_slots.py``). In a map a statement writes
whole (``SET x = c``, ``SET x += c``) they are plain extra keys, stored with no change to the
statement. A statement that names the property (``x.embedding = r.embedding``) instead says
``SET x += coalesce(r.embedding_dual, {})`` beside it, and gets them as an ``embedding_dual``
map; without a migration the key is absent and the statement writes the active slot only.
Each vector goes to the slot of its own model whatever slot is active
by the time the write runs, so a cutover racing a write mixes no models.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any, LiteralString

from palimpsest.embedding.slots import PROPERTY as PROPERTY
from palimpsest.embedding.slots import SLOTS as SLOTS
from palimpsest.embedding.slots import DualVector as DualVector
from palimpsest.embedding.slots import Slot as Slot
from palimpsest.embedding.slots import other as other
from palimpsest.embedding.slots import parse as parse
from palimpsest.embedding.vectors import Vector

_PROPERTY = re.compile(r"(?<=\.)embedding\b")
_INDEX = re.compile(r"\b(memory|chunk|fact|passage)_embedding\b")


@cache
def text_on(text: LiteralString, slot: Slot) -> LiteralString:
    """A scoped statement's text with slot ``a``'s names replaced by ``slot``'s."""
    if slot == "a":
        return text
    # The same literal with a fixed substitution: nothing from a caller reaches it.
    return _INDEX.sub(r"\1_embedding_b", _PROPERTY.sub("embedding_b", text))


DUAL_KEY = "embedding_dual"


@cache
def names_dual(text: str) -> bool:
    """Does the statement take the other slot's vector as an ``embedding_dual`` map?"""
    return DUAL_KEY in text


def params_on(
    params: dict[str, Any], slot: Slot, dual: bool = False, as_map: bool = False
) -> dict[str, Any]:
    """The parameters with every nested ``embedding`` key renamed for ``slot`` and, when
    ``dual`` (a migration is under way), each ``DualVector`` split into the two slots' vectors:
    the other slot's as extra keys, or ``as_map`` under ``embedding_dual`` (a new dict; the
    caller's maps are not changed)."""
    if dual:
        split: dict[str, Any] = _split(params, slot, as_map, top=True)
        return split
    if slot == "a":
        return params
    return {k: _renamed(v) for k, v in params.items()}


def _split(value: Any, slot: Slot, as_map: bool, top: bool = False) -> Any:
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if k == DUAL_KEY:  # a caller's placeholder (None) never hides a split's map
                out.setdefault(k, v)
                continue
            if k != "embedding":
                out[k] = _split(v, slot, as_map)
                continue
            key = k if top else PROPERTY[slot]  # top-level names stay: the text keeps them
            if not isinstance(v, DualVector):
                out[key] = v
            elif as_map:
                out[key], out[DUAL_KEY] = _placed(v, slot)
            else:
                out[key], extra = _placed(v, slot)
                out.update(extra)
        return out
    if isinstance(value, list) and value and isinstance(value[0], dict | list):
        return [_split(v, slot, as_map) for v in value]
    return value


def _placed(v: DualVector, slot: Slot) -> tuple[Vector, dict[str, Any]]:
    """The vector for the active ``slot``, and the other slot's properties: the target
    model's vector with its fingerprint (the active model's first two components)."""
    active = Vector(v)
    fingerprint = list(active[:2])
    fresh = {PROPERTY[v.slot]: v.target, PROPERTY[v.slot] + "_of": fingerprint}
    if v.slot != slot:
        return active, fresh
    # A cutover ran between embedding and writing: the target model's slot is active now.
    return v.target, {PROPERTY[other(slot)]: active, PROPERTY[slot] + "_of": fingerprint}


def _renamed(value: Any) -> Any:
    if isinstance(value, dict):
        return {("embedding_b" if k == "embedding" else k): _renamed(v) for k, v in value.items()}
    if isinstance(value, list) and value and isinstance(value[0], dict | list):
        return [_renamed(v) for v in value]
    return value
