"""GraphQL fields of entity resolution: likely duplicates, merges and their undoing."""

from __future__ import annotations

from datetime import datetime

import strawberry
from strawberry import ID

from palimpsest.graphql.context import Info
from palimpsest.graphql.cost import Scans, costs
from palimpsest.graphql.facts import Entity
from palimpsest.graphql.types import AfterArg, Page, Scope, page_of
from palimpsest.resolvers import entities
from palimpsest.resolvers import facts as ops
from palimpsest.schema import models


@strawberry.type(description="Two entities of one type that likely name one thing.")
class EntityDuplicate:
    a: Entity
    b: Entity
    reason: str = strawberry.field(
        description="SAME_NAME (the names fold to one), ALIAS (one is the other's alias) or "
        "EDIT_DISTANCE (the folded names' edit similarity is at least "
        f"{ops.MIN_SIMILARITY})."
    )
    figure: float = strawberry.field(
        description="1.0 for SAME_NAME and ALIAS, else 1 - edit distance / longer length."
    )

    @classmethod
    def of(cls, d: models.EntityDuplicate) -> EntityDuplicate:
        return cls(a=Entity.of(d.a), b=Entity.of(d.b), reason=d.reason, figure=d.figure)


@strawberry.type(description="A recorded merge of entities into one.")
class EntityMerge:
    id: ID
    keep_id: ID
    merged_ids: list[ID]
    added_aliases: list[str]
    facts_moved: int
    mentions_moved: int
    created_at: datetime
    undone_at: datetime | None

    @classmethod
    def of(cls, m: models.EntityMerge) -> EntityMerge:
        return cls(
            id=ID(m.id),
            keep_id=ID(m.keep_id),
            merged_ids=[ID(i) for i in m.merged_ids],
            added_aliases=list(m.added_aliases),
            facts_moved=m.facts_moved,
            mentions_moved=m.mentions_moved,
            created_at=m.created_at,
            undone_at=m.undone_at,
        )


@strawberry.type
class EntityQuery:
    @strawberry.field(
        description="Likely duplicate entities of one type, in (type, folded names) order, "
        f"paged (limit at most {ops.MAX_LIMIT}; reads up to {ops.MAX_SCAN} entities).",
        metadata=costs(Scans()),
    )
    async def entity_duplicates(
        self, info: Info, scope: Scope, limit: int = 50, after: AfterArg = None
    ) -> Page[EntityDuplicate]:
        c = info.context
        found = await ops.duplicates(c.services, c.principal, scope, limit, after)
        return page_of(found, EntityDuplicate.of)

    @strawberry.field(description="The merges that kept or folded in an entity, newest first.")
    async def entity_merges(
        self, info: Info, scope: Scope, entity_id: ID, limit: int = 20
    ) -> list[EntityMerge]:
        c = info.context
        found = await entities.merges(c.services, c.principal, scope, entity_id, limit)
        return [EntityMerge.of(m) for m in found]


@strawberry.type
class EntityMutation:
    @strawberry.mutation(
        description="Fold entities of the kept one's type into it: their facts and mentions "
        "move onto it and their names become its aliases. Recorded; `unmergeEntities` "
        "reverses it (the record's id is in `entityMerges`)."
    )
    async def merge_entities(
        self, info: Info, scope: Scope, keep_id: ID, merge_ids: list[ID]
    ) -> Entity:
        c = info.context
        kept, _ = await entities.merge(
            c.services, c.principal, scope, keep_id, [str(i) for i in merge_ids]
        )
        return Entity.of(kept)

    @strawberry.mutation(
        description="Reverse a merge exactly: the kept entity first, then the restored ones."
    )
    async def unmerge_entities(self, info: Info, scope: Scope, merge_id: ID) -> list[Entity]:
        c = info.context
        found = await entities.unmerge(c.services, c.principal, scope, merge_id)
        return [Entity.of(e) for e in found]
