"""The MCP recall and search tools' per-call controls (docs/reference/recall.md, Per-call
controls): typed arguments only; the bounds are checked in the core (``recall_controls``)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from palimpsest.mcp.strict_args import Int32, ToolInput


class LegWeights(ToolInput):
    vector: float | None = Field(default=None, description="The vector leg's weight, 0-100.")
    fulltext: float | None = Field(default=None, description="The full-text leg's weight, 0-100.")


MinScore = Annotated[
    float | None,
    Field(
        description="Only good matches: drop hits whose cosine is below this (-1 to 1); a hit "
        "with no cosine stays only if its full-text rank is within top_k. Default off."
    ),
]
HalfLife = Annotated[
    str | None,
    Field(
        description="Prefer recent rows, e.g. '30d', '12h', '2w': the score halves per "
        "half-life of age. Never a filter. Default off."
    ),
]
Weights = Annotated[
    LegWeights | None, Field(description="Weights of the vector and full-text legs.")
]
PerDocument = Annotated[
    Int32 | None, Field(description="At most this many hits per document (1-50). Default off.")
]
