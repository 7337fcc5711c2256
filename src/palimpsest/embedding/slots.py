"""Embedding slots, the domain half: which slots there are, where each keeps its vectors, and
a row's vector with its migration target's (``DualVector``). ``cypher/slots.py`` rewrites
statements and parameters for a slot; docs there."""

from __future__ import annotations

from typing import Literal

from palimpsest.embedding.vectors import Vector

Slot = Literal["a", "b"]
SLOTS: tuple[Slot, Slot] = ("a", "b")
PROPERTY: dict[Slot, str] = {"a": "embedding", "b": "embedding_b"}


def other(slot: Slot) -> Slot:
    return "b" if slot == "a" else "a"


def parse(value: object) -> Slot:
    """A slot as the schema record stores it (absent on databases made before slots: ``a``)."""
    return "b" if value == "b" else "a"


class DualVector(Vector):
    """A row's vector of the active model with the same text's vector of the migration's
    target model, which belongs in ``slot``."""

    __slots__ = ("slot", "target")

    def __init__(self, active: Vector, target: Vector, slot: Slot) -> None:
        super().__init__(active)
        self.target = target
        self.slot = slot
