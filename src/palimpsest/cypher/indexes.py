"""Apply the constraints and indexes of ``cypher.schema`` at start-up, idempotently."""

from __future__ import annotations

import re
from typing import Any

from palimpsest.cypher import embedding_slots as slots_q
from palimpsest.cypher import schema as q
from palimpsest.cypher.driver.executor import Database
from palimpsest.errors import Unavailable
from palimpsest.schema.embedding_state import EmbeddingState, decode_state

# Rows are indexed as pre-analyzed terms (``fulltext.analyze``), so Lucene must not analyze
# them again: whitespace splitting only. Hex scope keys are single tokens.
FULLTEXT_ANALYZER = "whitespace"
FULLTEXT_OPTIONS = {
    "indexConfig": {
        "fulltext.analyzer": FULLTEXT_ANALYZER,
        # Synchronous: a row is searchable as soon as its transaction commits.
        "fulltext.eventually_consistent": False,
    }
}


HNSW_M = 32
HNSW_EF_CONSTRUCTION = 200


def vector_options(dimensions: int) -> dict[str, Any]:
    return {
        "indexConfig": {
            "vector.dimensions": dimensions,
            "vector.similarity_function": "cosine",
            "vector.quantization.type": "none",
            # A denser graph than Lucene's defaults (16, 100): with them a few rows in a
            # hundred were reachable by no search, not even for their own vector, so a wider
            # search could not find them (docs/notes/search-latency.md, index options).
            "vector.hnsw.m": HNSW_M,
            "vector.hnsw.ef_construction": HNSW_EF_CONSTRUCTION,
        }
    }


async def apply_schema(db: Database, model: str, dimensions: int) -> EmbeddingState:
    """Create everything that is missing, wait until online, and check the embedding model:
    the configured one must be one the database holds (``palimpsest reembed`` adds another).
    Answers the database's embedding state."""
    await _drop_reshaped_ranges(db)
    for statement in (*q.CONSTRAINTS, *q.RANGE_INDEXES):
        await db.write(statement)
    await db.write(q.MERGE_SCHEMA_INFO, {"model": model, "dimensions": dimensions})
    state = decode_state((await db.read(slots_q.READ_STATE, {"info": slots_q.INFO_ID}))[0])
    for held in state.models:  # each slot's indexes, made for its own model's dimension
        for statement in slots_q.CREATE_INDEXES[held.slot]:
            await db.write(statement, {"options": vector_options(held.dimensions)})
    for statement in q.DROP_RETIRED:
        await db.write(statement)
    await _drop_stale_fulltext(db)
    for statement in q.FULLTEXT_INDEXES:
        await db.write(statement, {"options": FULLTEXT_OPTIONS})
    await db.write(q.AWAIT_INDEXES)
    while (await db.write(q.MIGRATE_FACT_SOURCES))[0]["migrated"]:
        pass
    while (await db.write(q.WITHHOLD_FOREIGN_QUOTES))[0]["migrated"]:
        pass
    check_model(state, model, dimensions)
    return state


def check_model(state: EmbeddingState, model: str, dimensions: int) -> None:
    """Refuse, in one line naming the settings, a configured model the database does not hold."""
    if (model, dimensions) not in {(m.model, m.dimensions) for m in state.models}:
        active = state.active
        raise Unavailable(
            f"the database's vectors were made with {active.model} ({active.dimensions} "
            f"dimensions), not the configured {model} ({dimensions}): set "
            f"PALIMPSEST_EMBEDDING_MODEL={active.model} and "
            f"PALIMPSEST_EMBEDDING_DIMENSIONS={active.dimensions}, or migrate with "
            "`palimpsest reembed --model NAME`"
        )


async def preflight_model(db: Database, model: str, dimensions: int) -> None:
    """``check_model`` before anything is written or started; a new database passes."""
    rows = await db.read(slots_q.READ_STATE, {"info": slots_q.INFO_ID})
    if rows:
        check_model(decode_state(rows[0]), model, dimensions)


# "CREATE INDEX name IF NOT EXISTS FOR (x:Label) ON (x.a, x.b)", nodes or relationships.
_RANGE_SHAPE = re.compile(r"CREATE INDEX (\w+) IF NOT EXISTS FOR .*?:(\w+)[)\]].* ON \(([^)]*)\)")


def range_shapes() -> dict[str, tuple[str, list[str]]]:
    """Each range index of ``cypher.schema`` by name: its label or type and its properties."""
    shapes: dict[str, tuple[str, list[str]]] = {}
    for statement in q.RANGE_INDEXES:
        found = _RANGE_SHAPE.fullmatch(statement.text)
        if found is None:
            raise ValueError(f"unreadable range index: {statement.name}")
        name, label, props = found.groups()
        shapes[name] = (label, [p.strip().split(".", 1)[1] for p in props.split(",")])
    return shapes


async def _drop_reshaped_ranges(db: Database) -> None:
    """An index with one of our names but another shape is dropped, to be made again."""
    wanted = range_shapes()
    for index in await list_indexes(db):
        shape = wanted.get(index["name"])
        if shape and (index["labelsOrTypes"], index["properties"]) != ([shape[0]], shape[1]):
            await db.write(q.DROP_INDEX, {"name": index["name"]})


async def _drop_stale_fulltext(db: Database) -> None:
    """A full-text index built with another analyzer is dropped, to be rebuilt below."""
    current = {i["name"]: i for i in await list_indexes(db) if i["type"] == "FULLTEXT"}
    for name, drop in q.DROP_FULLTEXT.items():
        config = (current.get(name) or {}).get("options", {}).get("indexConfig", {})
        if name in current and config.get("fulltext.analyzer") != FULLTEXT_ANALYZER:
            await db.write(drop)


async def list_indexes(db: Database) -> list[dict[str, Any]]:
    return await db.read(q.LIST_INDEXES)
