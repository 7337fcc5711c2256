"""The embedding models a database holds, as its schema record states them (``cypher/slots.py``).

``steady``: one model, in the active slot. ``building``: a migration fills the other slot with
``target`` (recall still reads the active one). ``cutover``: recall reads the new model; the
old one's vectors are kept until ``reembed --drop-old``. ``aborting``: ``reembed --abort`` is
removing the abandoned target's vectors (``aborted``); recall and writes are as in ``steady``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.embedding.slots import Slot, other, parse


@dataclass(frozen=True, slots=True)
class ModelSlot:
    model: str
    dimensions: int
    slot: Slot


@dataclass(frozen=True, slots=True)
class EmbeddingState:
    active: ModelSlot
    target: ModelSlot | None
    old: ModelSlot | None
    aborted: ModelSlot | None
    started_at: datetime | None
    cutover_at: datetime | None

    @property
    def state(self) -> str:
        if self.target:
            return "building"
        return "cutover" if self.old else "aborting" if self.aborted else "steady"

    @property
    def models(self) -> tuple[ModelSlot, ...]:
        return tuple(m for m in (self.active, self.target, self.old) if m is not None)


def decode_state(row: dict[str, Any]) -> EmbeddingState:
    slot = parse(row["slot"])
    target = old = aborted = None
    if row["target_model"] is not None:
        target = ModelSlot(row["target_model"], int(row["target_dimensions"]), other(slot))
    if row["old_model"] is not None:
        old = ModelSlot(row["old_model"], int(row["old_dimensions"]), other(slot))
    if row.get("aborted_model") is not None:
        aborted = ModelSlot(row["aborted_model"], int(row["aborted_dimensions"]), other(slot))
    return EmbeddingState(
        active=ModelSlot(row["model"], int(row["dimensions"]), slot),
        target=target,
        old=old,
        aborted=aborted,
        started_at=row["started_at"],
        cutover_at=row["cutover_at"],
    )
