"""Shared GraphQL types: the scope enum, provenance and the caller."""

from __future__ import annotations

from datetime import datetime

import strawberry

from palimpsest.errors import PalimpsestError
from palimpsest.graphql.context import Info
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.identity.scopes import Plane, sees_writer
from palimpsest.schema import models

# Registering the domain enum lets annotations use it directly; the domain stays free of
# strawberry imports. Import ``Scope`` from here so the registration has happened.
__all__ = ["Me", "Provenance", "Scope", "SourceQuote"]

strawberry.enum(
    Scope,
    name="Scope",
    description="Whose data an operation reaches; the owner always comes from the run token.",
)


@strawberry.type
class SourceQuote:
    chunk_id: str
    start: int
    end: int
    text: str


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
    origin: str
    compaction_generation: int | None
    source_quote: SourceQuote | None
    judged_by: str | None
    judged_at: datetime | None
    writer: strawberry.Private[models.Provenance]

    @strawberry.field(description=_WRITER_HELP)
    def tenant(self, info: Info) -> str:
        return self.writer.tenant_id if self._shown(info) else ""

    @strawberry.field(description=_WRITER_HELP)
    def session(self, info: Info) -> str | None:
        return self.writer.session_id if self._shown(info) else None

    @strawberry.field(description=_WRITER_HELP)
    def run(self, info: Info) -> str | None:
        return self.writer.run_id if self._shown(info) else None

    @strawberry.field(description=_WRITER_HELP)
    def agent(self, info: Info) -> str | None:
        return self.writer.agent_name if self._shown(info) else None

    @strawberry.field(description=_WRITER_HELP)
    def model(self, info: Info) -> str | None:
        return self.writer.model if self._shown(info) else None

    def _shown(self, info: Info) -> bool:
        return sees_writer(info.context.principal, self.writer.tenant_id)

    @classmethod
    def of(cls, p: models.Provenance) -> Provenance:
        quote = p.source_quote
        return cls(
            writer=p,
            origin=p.origin,
            compaction_generation=p.compaction_generation,
            source_quote=SourceQuote(
                chunk_id=quote.chunk_id, start=quote.start, end=quote.end, text=quote.text
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
    roles: list[str]
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
            roles=sorted(r.value for r in p.roles),
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
