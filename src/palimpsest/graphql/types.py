"""Shared GraphQL types: the scope enum, the page of every list, provenance and the caller.

Lists that can grow are a ``Page`` (rendered ``<Item>Page``) with ``limit`` and ``after``
arguments; lists bounded by the request itself (a batch's results, ``topK`` hits, a
document's own chunks) stay plain lists.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Generic, TypeVar

import strawberry

from palimpsest import paging
from palimpsest.domain.documents.markdown import ChunkType
from palimpsest.errors import PalimpsestError
from palimpsest.identity import Origin, Principal, Role, Scope, resolve_scope
from palimpsest.identity.scopes import Plane
from palimpsest.schema import models

# Registering the domain enums lets annotations use them directly; the domain stays free of
# strawberry imports. Import them from here so the registration has happened.
__all__ = [
    "QUOTE_HELP",
    "AfterArg",
    "ChunkType",
    "LimitArg",
    "Me",
    "Origin",
    "Page",
    "Provenance",
    "Role",
    "Scope",
    "SourceQuote",
    "page_of",
]

S = TypeVar("S")
T = TypeVar("T")

strawberry.enum(
    Scope,
    name="Scope",
    description="Whose data an operation reaches; the owner always comes from the run token.",
)
strawberry.enum(Origin, name="Origin", description="What kind of writer wrote a row.")
strawberry.enum(Role, name="Role", description="A role a run token carries.")
strawberry.enum(ChunkType, name="ChunkType", description="What kind of Markdown block a chunk is.")

LimitArg = Annotated[
    int, strawberry.argument(description="Items per page (at least 1; each list has a maximum).")
]
AfterArg = Annotated[
    str | None,
    strawberry.argument(
        description="The `cursor` of the previous page; null or absent for the first page."
    ),
]


@strawberry.type(description="One page of a list, in the list's stable order.")
class Page(Generic[T]):
    items: list[T]
    cursor: str | None = strawberry.field(
        description="Opaque; pass as `after` for the next page. Null on the last page."
    )
    has_more: bool = strawberry.field(description="True when another page follows.")


def page_of(found: paging.Page[S], convert: Callable[[S], T]) -> Page[T]:
    """Render a resolver's page, converting each item."""
    return Page(
        items=[convert(x) for x in found.items], cursor=found.cursor, has_more=found.has_more
    )


QUOTE_HELP = (
    "The quoted words; null when the span lives in another scope than the row (a fact "
    "placed out of the writer's scope) and neither says no more than the fact nor was marked "
    "`shareQuote`: the chunk id then opens only in the span's own scope."
)


@strawberry.type
class SourceQuote:
    chunk_id: strawberry.ID
    start: int
    end: int
    text: str | None = strawberry.field(description=QUOTE_HELP)


_WRITER_HELP = (
    "Null (tenant: empty) unless the reader may see who wrote the row: the row is in the "
    "reader's own tenant, or the reader is a platform operator. GLOBAL rows carry no tenant."
)


@strawberry.type(
    description="Who wrote a row and from what. `origin` is stamped by the server. Across "
    "tenants (GLOBAL rows) the writer's session, run, agent and model are shown to platform "
    "operators only; everyone sees origin, compaction generation, source quote and judgement."
)
class Provenance:
    """Rendered as the core redacted it for the caller (``resolvers.common.provenance_from``)."""

    origin: Origin
    compaction_generation: int | None
    source_quote: SourceQuote | None
    judged_by: str | None
    judged_at: datetime | None
    tenant: str = strawberry.field(description=_WRITER_HELP)
    session: str | None = strawberry.field(description=_WRITER_HELP)
    run: str | None = strawberry.field(description=_WRITER_HELP)
    agent: str | None = strawberry.field(description=_WRITER_HELP)
    model: str | None = strawberry.field(description=_WRITER_HELP)
    writer: str | None = strawberry.field(
        default=None,
        description="The user who wrote the row, server-stamped from the token. "
        + _WRITER_HELP
        + " Also null for rows written before writers were stamped, by a token naming no "
        "user, or whose writer was erased under the ANONYMISE policy.",
    )

    @classmethod
    def of(cls, p: models.Provenance) -> Provenance:
        quote = p.source_quote
        return cls(
            tenant=p.tenant_id,
            session=p.session_id,
            run=p.run_id,
            agent=p.agent_name,
            model=p.model,
            writer=p.writer,
            origin=Origin(p.origin),
            compaction_generation=p.compaction_generation,
            source_quote=SourceQuote(
                chunk_id=strawberry.ID(quote.chunk_id),
                start=quote.start,
                end=quote.end,
                text=quote.text,
            )
            if quote
            else None,
            judged_by=p.judged_by,
            judged_at=p.judged_at,
        )


@strawberry.type(description="The caller, as the verified run token names it.")
class Me:
    tenant: str
    user: str | None
    agent: str | None
    session: str | None
    run: str | None
    model: str | None
    roles: list[Role]
    isolated: bool
    memory_scopes: list[Scope] = strawberry.field(
        description="Scopes this token reaches on the memory planes, after defaults."
    )
    sql_scopes: list[Scope] = strawberry.field(
        description="Scopes this token reaches in SQL Memory, after defaults."
    )

    @classmethod
    def of(cls, p: Principal) -> Me:
        def ordered(plane: Plane) -> list[Scope]:
            # Only scopes this token can actually reach: USER needs a user id in the token,
            # AGENT an agent name, whatever the grant lists say.
            return [s for s in Scope if _resolves(p, s, plane)]

        return cls(
            tenant=p.tenant_id,
            user=p.user_id,
            agent=p.agent_name,
            session=p.session_id,
            run=p.run_id,
            model=p.model,
            roles=sorted(p.roles, key=lambda r: r.value),
            isolated=p.isolated,
            memory_scopes=ordered(Plane.MEMORY),
            sql_scopes=ordered(Plane.SQL),
        )


def _resolves(p: Principal, scope: Scope, plane: Plane) -> bool:
    try:
        resolve_scope(p, scope, plane)
    except PalimpsestError:
        return False
    return True
