"""The ``context`` field: one packed, cited block of memory for a runtime's next turn."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import strawberry
from strawberry import ID

from palimpsest.domain.ranking.fusion import Source

# graphql/recall.py declares the Source enum to strawberry: it must run before a type uses it.
from palimpsest.graphql import recall as _declares_source  # noqa: F401
from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import Searches, costs
from palimpsest.graphql.scalars import Instant
from palimpsest.graphql.types import Scope
from palimpsest.resolvers import recall as ops


@strawberry.enum(description="Which part of a context block a piece belongs to, in order.")
class ContextKind(Enum):
    PINNED = "pinned"  # a pinned core note
    FACT = "fact"  # a current fact about an entity the query names
    HIT = "hit"  # a recall hit


@strawberry.type(description="One piece of a context block, in the block's order.")
class ContextItem:
    kind: ContextKind
    source: Source = strawberry.field(description="The kind of row it came from.")
    scope: Scope
    id: ID = strawberry.field(description="The note's key, or the fact's or chunk's id.")
    tokens: int = strawberry.field(description="Its line's tokens, citation included.")
    cut: bool = strawberry.field(description="Only its first whole sentences fitted in the budget.")

    @classmethod
    def of(cls, i: ops.ContextItem) -> ContextItem:
        return cls(
            kind=ContextKind(i.kind),
            source=i.source,
            scope=i.scope,
            id=ID(i.id),
            tokens=i.tokens,
            cut=i.cut,
        )


@strawberry.type(
    description="Pinned notes, then facts about the entities the query names, then recall "
    "hits: one line each, starting with the id it cites, e.g. `[note:key]`; a line break "
    "inside a piece is written `\\n` (a backslash `\\\\`), so lines and items match one for one."
)
class ContextBlock:
    text: str
    tokens: int = strawberry.field(
        description="The text's tokens by the embedding model's tokenizer (at most the budget)."
    )
    truncated: bool = strawberry.field(
        description="A piece was left out, or cut at a sentence boundary, to fit the budget."
    )
    items: list[ContextItem]


ContextMinScoreArg = Annotated[
    float | None,
    strawberry.argument(
        description="A floor on the search hits' cosine, in [-1, 1], as recall's `minScore`: "
        "a hit with a lower cosine is left out; one with no cosine stays only if its "
        "full-text rank is within the search's topK. Pinned notes and facts about named "
        "entities are not hits and always come. Default: the server's "
        "PALIMPSEST_CONTEXT_MIN_SCORE; -1 keeps every hit with a cosine."
    ),
]


@strawberry.type
class ContextQuery:
    @strawberry.field(
        description="The block of memory for the next turn, within `budgetTokens`: the "
        "pinned notes of the scopes, the current facts (as of `asOf`/`knownAt`) about the "
        "entities `query` names, then the best search hits above `minScore`. `alsoScopes` as "
        "in recall.",
        metadata=costs(Searches(default_sources=3)),
    )
    async def context(
        self,
        info: Info,
        scope: Scope,
        query: str,
        budget_tokens: int = ops.DEFAULT_BUDGET_TOKENS,
        also_scopes: list[Scope] | None = None,
        as_of: Instant | None = None,
        known_at: Instant | None = None,
        min_score: ContextMinScoreArg = None,
    ) -> ContextBlock:
        c = info.context
        block = await ops.context(
            c.services,
            c.principal,
            scope,
            query,
            budget_tokens,
            also_scopes or (),
            as_of,
            known_at,
            min_score,
        )
        return ContextBlock(
            text=block.text,
            tokens=block.tokens,
            truncated=block.truncated,
            items=[ContextItem.of(i) for i in block.items],
        )
