"""The arguments of recall and search: the time window and the per-call controls."""

from __future__ import annotations

from typing import Annotated

import strawberry

from palimpsest.domain.ranking import fusion as pure
from palimpsest.graphql.scalars import Instant

strawberry.enum(
    pure.Missing,
    name="MissingDates",
    description="What a time window does with "
    "undated rows: PREFER ranks them after in-window rows, REQUIRE drops them.",
)


@strawberry.input(
    description="Time filters. from/to bound observedAt; asOf/knownAt filter "
    "facts by validity and by what was recorded then."
)
class WhenInput:
    from_: Instant | None = strawberry.field(default=None, name="from")
    to: Instant | None = None
    missing: pure.Missing | None = None
    slack: str | None = strawberry.field(default=None, description="e.g. 72h (default) or 3d.")
    as_of: Instant | None = None
    known_at: Instant | None = None


DedupArg = Annotated[
    float | None,
    strawberry.argument(
        description="A cosine threshold in (0, 1]: drop each hit whose embedding is this close "
        "to a better-ranked hit's; `explain.duplicates` of the kept hit names it. Default off."
    ),
]


@strawberry.input(description="Weights of the fusion legs; a leg not given keeps the setting.")
class LegWeightsInput:
    vector: float | None = strawberry.field(default=None, description="0 to 100.")
    fulltext: float | None = strawberry.field(default=None, description="0 to 100.")


MinScoreArg = Annotated[
    float | None,
    strawberry.argument(
        description="A floor on the cosine, in [-1, 1]: a hit with a lower cosine is dropped; "
        "a hit with no cosine (the vector leg did not return it) is kept only if its "
        "full-text rank is within topK. Default off."
    ),
]
HalfLifeArg = Annotated[
    str | None,
    strawberry.argument(
        description="Prefer recent rows: the score times 2^(-age / halfLife), age of "
        "observedAt at `when.to` or now; e.g. 30d, 12h, 2w. Never a filter. Default off."
    ),
]
WeightsArg = Annotated[
    LegWeightsInput | None,
    strawberry.argument(description="The fusion legs' weights (default: the settings)."),
]
PerDocumentArg = Annotated[
    int | None,
    strawberry.argument(
        description="At most this many hits per document (1-50); rows of no document are not "
        "limited. Default off."
    ),
]
