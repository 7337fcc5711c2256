"""``embeddingStatus``: the models a database holds and their vectors per plane, for the
platform operator (resolvers/reembed.py; docs/reference/reembed.md)."""

from __future__ import annotations

from datetime import datetime

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.graphql.scalars import Int64
from palimpsest.resolvers import reembed as ops
from palimpsest.schema.embedding_state import ModelSlot


@strawberry.type(description="An embedding model the database holds vectors of.")
class EmbeddingModel:
    model: str
    dimensions: int
    slot: str = strawberry.field(description="a (property `embedding`) or b (`embedding_b`).")

    @classmethod
    def of(cls, m: ModelSlot | None) -> EmbeddingModel | None:
        return None if m is None else cls(model=m.model, dimensions=m.dimensions, slot=m.slot)


@strawberry.type(description="One plane's vectors of each model.")
class EmbeddingPlane:
    plane: str = strawberry.field(
        description="notes, noteVersions, chunks, chunkVersions, facts or passages."
    )
    active: Int64 = strawberry.field(description="Rows with a vector of the active model.")
    target: Int64 = strawberry.field(
        description="Of those, rows with a fresh vector of the target model (0 unless building)."
    )
    missing: Int64 = strawberry.field(
        description="active - target while building (what a cutover waits for); else 0."
    )
    old: Int64 = strawberry.field(
        description="Rows still holding the old model's vector (or, aborting, the aborted one's)."
    )


@strawberry.type(description="The database's embedding models and their vectors.")
class EmbeddingStatus:
    state: str = strawberry.field(
        description="steady (one model), building (a migration fills the target's vectors; "
        "recall reads the active model), cutover (recall reads the new model; the old "
        "vectors wait for `reembed --drop-old`) or aborting (`reembed --abort` removes the "
        "given-up target's vectors, counted in `old`; recall and writes as steady)."
    )
    active: EmbeddingModel
    target: EmbeddingModel | None
    old: EmbeddingModel | None
    aborted: EmbeddingModel | None = strawberry.field(
        description="While aborting, the given-up target whose vectors are being removed."
    )
    planes: list[EmbeddingPlane]
    started_at: datetime | None
    cutover_at: datetime | None


@strawberry.type
class EmbeddingStatusQuery:
    @strawberry.field(
        description="The embedding models, their vectors per plane and the migration's state "
        "(platform operator only)."
    )
    async def embedding_status(self, info: Info) -> EmbeddingStatus:
        c = info.context
        found = await ops.status(c.services, c.principal)
        s = found.state
        active = EmbeddingModel.of(s.active)
        assert active is not None
        planes = [
            EmbeddingPlane(
                plane=p.plane,
                active=Int64(p.active),
                target=Int64(p.target),
                missing=Int64(p.missing),
                old=Int64(p.old),
            )
            for p in found.planes
        ]
        return EmbeddingStatus(
            state=s.state,
            active=active,
            target=EmbeddingModel.of(s.target),
            old=EmbeddingModel.of(s.old),
            aborted=EmbeddingModel.of(s.aborted),
            planes=planes,
            started_at=s.started_at,
            cutover_at=s.cutover_at,
        )
