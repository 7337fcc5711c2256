"""Graph reads: entity lookup and graph recall over N hops with the time view applied."""

from __future__ import annotations

from dataclasses import dataclass

from palimpsest import paging
from palimpsest.cypher import graph as q
from palimpsest.cypher.driver.executor import Row
from palimpsest.domain.names import fold, normalise
from palimpsest.errors import InvalidArgument, NotFound
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.common import check_id, provenance_from
from palimpsest.resolvers.facts.decode import entity_from, fact_from
from palimpsest.resolvers.facts.inputs import MAX_NAME
from palimpsest.resolvers.facts.ledger import TimeView
from palimpsest.resolvers.services import Services
from palimpsest.schema.models import Entity, Fact, Provenance

MAX_HOPS = 3
MAX_ALIASES = 50
MAX_LIST_LIMIT = 1000
LIST_NAME = "entities"
MAX_SEEDS = 500
MAX_LIMIT = 200
MAX_CHUNKS = 50
MAX_QUERY_CHARS = 4000  # as recall's
QUERY_SEED_FACTS = 10


@dataclass(frozen=True, slots=True)
class ChunkRef:
    id: str
    document_id: str
    type: str
    text: str
    provenance: Provenance | None = None


@dataclass(frozen=True, slots=True)
class GraphRecall:
    seeds: list[Entity]
    entities: list[Entity]
    facts: list[Fact]
    chunks: list[ChunkRef]


async def find_entities(
    svc: Services,
    who: Principal,
    scope: Scope,
    type_: str | None,
    name: str | None,
    contains: str | None,
    limit: int,
    after: str | None = None,
) -> paging.Page[Entity]:
    ref = resolve_scope(who, scope)
    paging.check_limit(limit, MAX_LIST_LIMIT)
    position = paging.decode(after, LIST_NAME, (paging.Part.TEXT, paging.Part.TEXT))
    params = {
        "type": normalise(type_) if type_ else None,
        "name": normalise(name) if name else None,
        "key": (fold(name) or None) if name else None,
        "contains": normalise(contains) if contains else None,
        "limit": limit + 1,
        **_after(position),
    }
    rows = await svc.db.scoped(ref).read(q.FIND_ENTITIES, params)
    return paging.page(rows, limit, LIST_NAME, _position).map(lambda r: _entity(r, who))


async def set_aliases(
    svc: Services, who: Principal, scope: Scope, entity_id: str, aliases: list[str]
) -> Entity:
    """Replace an entity's aliases: other names the mentions extractor finds it by."""
    ref = resolve_scope(who, scope)
    check_id(entity_id, "id")
    if len(aliases) > MAX_ALIASES:
        raise InvalidArgument(f"{len(aliases)} aliases, over the {MAX_ALIASES} limit")
    clean = list(dict.fromkeys(" ".join(a.split()) for a in aliases))
    for alias in clean:
        if not alias or len(alias) > MAX_NAME:
            raise InvalidArgument(f"each alias must be 1-{MAX_NAME} characters, not blank")
    params = {
        "id": entity_id,
        "aliases": clean,
        "norms": sorted({normalise(a) for a in clean}),
        "keys": sorted({fold(a) for a in clean} - {""}),
    }
    rows = await svc.db.scoped(ref).write(q.SET_ENTITY_ALIASES, params)
    if not rows:
        raise NotFound("entity not found")
    return _entity(rows[0], who)


async def recall(
    svc: Services,
    who: Principal,
    scope: Scope,
    view: TimeView,
    query: str | None,
    seed_ids: list[str],
    hops: int,
    limit: int,
) -> GraphRecall:
    """Seeds come from ``seed_ids`` (named, so never time-filtered) and from the facts that
    best match ``query``; each hop adds the visible facts touching the frontier."""
    ref = resolve_scope(who, scope)
    if not 0 <= hops <= MAX_HOPS:
        raise InvalidArgument(f"hops must be between 0 and {MAX_HOPS}")
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}")
    if len(seed_ids) > MAX_SEEDS:
        raise InvalidArgument(f"at most {MAX_SEEDS} seed ids")
    if not seed_ids and not (query and query.strip()):
        raise InvalidArgument("give a query or seed ids")
    if query is not None and len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query is {len(query)} characters; the limit is {MAX_QUERY_CHARS}")
    for seed in seed_ids:
        check_id(seed, "seedIds")
    base = view.params()
    db = svc.db.scoped(ref)
    entities: dict[str, Entity] = {}
    facts: dict[str, Fact] = {}
    if seed_ids:
        rows = await db.read(q.ENTITIES_BY_ID, {**base, "ids": seed_ids})
        entities.update((r["id"], _entity(r, who)) for r in rows)
    if query and query.strip():
        vector = await svc.embed_question(who, query)
        rows = await db.read(q.SEARCH_FACTS, {**base, "vector": vector, "k": QUERY_SEED_FACTS})
        for row in rows:
            _take(scope, row, who, facts, entities)
        exact = await db.read(
            q.FIND_ENTITIES,
            {
                **base,
                **_after(None),
                "type": None,
                "name": normalise(query),
                "key": fold(query) or None,
                "contains": None,
                "limit": 20,
            },
        )
        entities.update((r["id"], _entity(r, who)) for r in exact)
    seeds = list(entities.values())
    frontier = set(entities)
    for _ in range(hops):
        if not frontier or len(facts) >= limit:
            break
        rows = await db.read(q.NEIGHBOUR_FACTS, {**base, "ids": sorted(frontier), "limit": limit})
        before = set(entities)
        for row in rows:
            _take(scope, row, who, facts, entities)
        frontier = set(entities) - before
    found = list(facts.values())[:limit]
    chunk_rows = await db.read(
        q.CHUNKS_FOR,
        {
            "chunk_ids": sorted({x.chunk_id for f in found for x in f.sources}),
            "entity_ids": sorted(entities),
        },
    )
    chunks = [
        ChunkRef(
            r["id"], r["document_id"], r["type"], r["text"], provenance_from(r["provenance"], who)
        )
        for r in chunk_rows
    ]
    return GraphRecall(seeds, list(entities.values()), found, chunks[:MAX_CHUNKS])


def _take(
    scope: Scope, row: Row, who: Principal, facts: dict[str, Fact], entities: dict[str, Entity]
) -> None:
    fact = fact_from(scope, row, who)
    facts.setdefault(fact.id, fact)
    entities.setdefault(fact.subject.id, fact.subject)
    entities.setdefault(fact.object.id, fact.object)


def _after(position: list[str] | None) -> dict[str, str | None]:
    name, type_ = position or (None, None)
    return {"after_name": name, "after_type": type_}


def _position(row: Row) -> list[str]:
    return [row["normalized_name"], row["type"]]


def _entity(row: Row, reader: Principal) -> Entity:
    return entity_from(row, reader)
