"""The extraction prompt: its instructions (one versioned file of the package) and the JSON
document of a call (the turns, the ontology, the known facts). No I/O at import: the file is
read on first use."""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib.resources import files
from typing import Any

from palimpsest.extraction.candidates import turn_label
from palimpsest.ontology import Ontology
from palimpsest.ontology.extractors import KnownFact, Turn

# The prompt in force: ``prompts/<VERSION>.md``. A changed prompt is a new file and version,
# so the version stamped on a fact names the words that drew it.
VERSION = "extract_v1"
MAX_TURN_CHARS = 12_000  # a longer turn is shown cut (its quotes are still checked whole)


@cache
def instructions(version: str = VERSION) -> str:
    return (files("palimpsest.extraction") / "prompts" / f"{version}.md").read_text("utf-8")


def document(turns: Sequence[Turn], ontology: Ontology | None, known: Sequence[KnownFact]) -> str:
    """The user message; the turns are labelled by position (``candidates.turn_label``)."""
    shown = {
        "turns": [
            {
                "id": turn_label(i),
                "speaker": t.speaker,
                "observedAt": t.observed_at.isoformat() if t.observed_at else None,
                "text": t.text[t.quote_start :][:MAX_TURN_CHARS],
            }
            for i, t in enumerate(turns)
        ],
        "ontology": _vocabulary(ontology),
        "known": [
            {
                "subject": {"type": f.subject_type, "name": f.subject},
                "predicate": f.predicate,
                "object": {"type": f.object_type, "name": f.object},
                "validAt": f.valid_at.isoformat() if f.valid_at else None,
            }
            for f in known
        ],
    }
    return json.dumps(shown, ensure_ascii=False)


def _vocabulary(ontology: Ontology | None) -> dict[str, Any]:
    if ontology is None or not ontology.confirmed:
        return {"declared": False, "types": []}
    return {
        "declared": True,
        "types": [
            {"name": t.name, "aliases": sorted(t.aliases - {t.name}), "single": sorted(t.single)}
            for t in sorted(ontology.types.values(), key=lambda t: t.name)
        ],
    }
