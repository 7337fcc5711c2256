"""What the consolidator writes for a span, as typed records (no I/O here).

A leased span becomes a ``turn`` chunk of its session's conversation (``TurnRow``) and the
mention edges drawn from it (``MentionRow``), each stamped with the harvesting run
(``RunStamp``). The records are frozen; ``params`` is the one encoder, applied where a
statement takes them (``resolvers/cycle/turn_rows.py``, ``resolvers/cycle/consolidate.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.identity import Origin
from palimpsest.identity.acting import HarvestedRun


@dataclass(frozen=True, slots=True)
class RunStamp:
    """Provenance of everything made from a span: its harvesting run, origin compaction."""

    session_id: str | None
    run_id: str | None
    agent_name: str | None
    model: str | None
    compaction_generation: int | None = None
    origin: str = Origin.COMPACTION.value

    @classmethod
    def of(cls, run: HarvestedRun, generation: int | None = None) -> RunStamp:
        return cls(run.session_id, run.run_id, run.agent_name, run.model, generation)

    def params(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "run_id": self.run_id,
            "agent_name": self.agent_name,
            "model": self.model,
            "origin": self.origin,
            "compaction_generation": self.compaction_generation,
        }


@dataclass(frozen=True, slots=True)
class TurnRow:
    """A span as a ``turn`` chunk: its whole text is one chunk, placed at the span's seq."""

    id: str
    type: str
    text: str
    separator: str
    position: int
    end_line: int
    embedding: Sequence[float]
    observed_at: datetime | None
    speaker: str | None
    role: str | None
    source_id: str | None
    stamp: RunStamp

    def params(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type,
            "text": self.text,
            "separator": self.separator,
            "position": self.position,
            "index": self.position,
            "start_line": 0,
            "end_line": self.end_line,
            "start_char": 0,
            "end_char": len(self.text),
            "embedding": self.embedding,
            "observed_at": self.observed_at,
            "speaker": self.speaker,
            "role": self.role,
            "source_id": self.source_id,
            **self.stamp.params(),
        }


@dataclass(frozen=True, slots=True)
class MentionRow:
    """A mention edge from a turn chunk to an entity (made if the scope has none by the name)."""

    chunk_id: str
    type: str
    name: str
    norm: str
    entity_id: str  # used only when the entity is new
    start: int
    end: int
    stamp: RunStamp

    def params(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "type": self.type,
            "name": self.name,
            "norm": self.norm,
            "entity_id": self.entity_id,
            "start": self.start,
            "end": self.end,
            **self.stamp.params(),
        }
