"""Export of everything one person owns (right of access), as JSON Lines.

The format (``palimpsest-export``, version 1, minor 5) is one JSON object per line:

- a header: ``{"kind": "header", "format": "palimpsest-export", "version": 1, "minor": 5,
  "tenant", "user", "exported_at"}`` (minor 1 added ``memory_version``, minor 2
  ``chunk_version`` and ``document_revision``, minor 3 ``merged_entity`` and
  ``entity_merge``, minor 4 an entity's ``version_mentions``, minor 5 ``fact_pair``; files
  without them read the same);
- one record per row, in this order, each with the row's own properties (``props``, every
  property but embeddings and the scope stamps, so provenance travels with the row):
  ``memory``; ``memory_version`` (past versions and tombstones of notes); ``document``;
  ``chunk`` (+ ``parent_id``, ``next_id``: the tree and reading order); ``chunk_version``
  (closed chunk versions, tree and order in their props); ``document_revision``; ``entity``
  (+ ``mentions``: ``[{chunk_id, props}]``, from current chunks, and ``version_mentions``:
  ``[{document_id, chunk_id, from_revision, props}]``, from closed chunk versions, which keep
  the mentions they had and which a merge moves); ``merged_entity`` (an entity a merge set aside:
  its names, ``merged_into`` and ``merge_id`` in ``props``; it has no mention or fact);
  ``entity_merge`` (a merge record, undone ones too: ``keep_id``, ``merged_ids``,
  ``added_aliases``, times and provenance, so ``unmerge`` works after an import; the facts
  and mentions it moved carry its id in their stacks); ``fact`` (+ ``subject_id``,
  ``object_id``, ``sources``: a list of props); ``fact_pair`` (two close facts by id,
  ``older_id`` and ``newer_id``, with the judge's verdict, reason, ``judged_by`` and
  ``judged_at`` when judged); ``span`` (pending spans); ``tenant_fact``
  (a fact of the tenant scope the person attests or wrote without a source: ``props``,
  ``subject``, ``object``, ``written`` (true for a sourceless fact of theirs) and only the
  person's own ``sources``); ``sql_schema``
  (``type``, ``name``, ``sql``) and ``sql_row`` (``table``, ``columns``, ``values`` in the
  API's JSON form);
- a trailer ``{"kind": "end", "records": N}`` counting the records between the two.

Datetimes are ``{"$datetime": "<RFC 3339>"}``. ``palimpsest import`` reads it back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import datetime
from typing import Any

import orjson

from palimpsest.cypher import export as q
from palimpsest.cypher.driver.executor import Row, ScopedDatabase, Statement
from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Principal
from palimpsest.identity.scopes import PersonRefs, person_refs
from palimpsest.resolvers.services import Services

FORMAT = "palimpsest-export"
VERSION = 1
# Additions older files lack: 1 memory_version; 2 chunk_version, document_revision;
# 3 merged_entity, entity_merge; 4 an entity's version_mentions; 5 fact_pair.
MINOR = 5
PAGE = 500
# Both embedding slots' vectors and fingerprints (cypher/slots.py, cypher/embedding_slots.py).
VECTORS = ["embedding", "embedding_b", "embedding_of", "embedding_b_of"]
SKIP = [*VECTORS, "scope_key", "tenant_id", "scope", "owner_id"]
# A tenant fact's run identifiers and writer keys may be another member's: they do not travel.
TENANT_SKIP = [
    *SKIP,
    "session_id",
    "run_id",
    "writer_key",
    "writer_id",
    "co_writer_keys",
    "co_written",
    "locked_at",
]
DATETIME = "$datetime"

Record = dict[str, Any]


async def export_me(svc: Services, who: Principal) -> list[str]:
    """The caller's export as lines, up to ``export_max_bytes`` (larger: use the CLI)."""
    limit = svc.settings.limits.export_max_bytes
    lines: list[str] = []
    size = 0
    async for line in export_lines(svc, person_refs(who), svc.clock()):
        size += len(line.encode()) + 1
        if size > limit:
            raise QuotaExceeded(
                f"your export is over the {limit}-byte limit of exportMe; an operator can "
                "write it to a file with `palimpsest export`",
                limit="exportMaxBytes",
                quota=limit,
            )
        lines.append(line)
    return lines


async def export_lines(svc: Services, refs: PersonRefs, now: datetime) -> AsyncIterator[str]:
    header = {
        "kind": "header",
        "format": FORMAT,
        "version": VERSION,
        "minor": MINOR,
        "tenant": refs.person.tenant_id,
        "user": refs.user_id,
        "exported_at": now,
    }
    yield dumps(header)
    count = 0
    person = svc.db.scoped(refs.person)
    for statement, shape in READERS:
        async for row in _pages(person, statement, {"skip": SKIP}):
            count += 1
            yield dumps(shape(row))
    tenant = svc.db.scoped(refs.tenant)
    shared = {"skip": TENANT_SKIP, "person_key": refs.person.scope_key}
    async for row in _pages(tenant, q.EXPORT_TENANT_FACTS, shared):
        count += 1
        yield dumps(_tenant_fact(row))
    for record in await svc.sql.dump(refs.person.scope_key):
        count += 1
        yield dumps(record)
    yield dumps({"kind": "end", "records": count})


async def _pages(
    db: ScopedDatabase, statement: Statement, params: dict[str, Any]
) -> AsyncIterator[Row]:
    after = ""
    while True:
        rows = await db.read(statement, {**params, "after": after, "limit": PAGE})
        for row in rows:
            yield row
        if len(rows) < PAGE:
            return
        after = rows[-1]["cursor"]


def _props(pairs: list[list[Any]]) -> dict[str, Any]:
    return {str(pair[0]): pair[1] for pair in pairs}


def _plain(kind: str) -> Callable[[Row], Record]:
    def shape(row: Row) -> Record:
        return {"kind": kind, "props": _props(row["props"])}

    return shape


def _chunk(row: Row) -> Record:
    return {
        "kind": "chunk",
        "props": _props(row["props"]),
        "parent_id": row["parent_id"],
        "next_id": row["next_id"],
    }


def _entity(row: Row) -> Record:
    mentions = [{"chunk_id": m["chunk_id"], "props": _props(m["props"])} for m in row["mentions"]]
    versions = [{**m, "props": _props(m["props"])} for m in row["version_mentions"]]
    return {
        "kind": "entity",
        "props": _props(row["props"]),
        "mentions": mentions,
        "version_mentions": versions,
    }


def _fact(row: Row) -> Record:
    return {
        "kind": "fact",
        "props": _props(row["props"]),
        "subject_id": row["subject_id"],
        "object_id": row["object_id"],
        "sources": [_props(x) for x in row["sources"]],
    }


def _tenant_fact(row: Row) -> Record:
    return {
        "kind": "tenant_fact",
        "props": _props(row["props"]),
        "written": bool(row["written"]),
        "subject": _props(row["subject"]),
        "object": _props(row["object"]),
        "sources": [_props(x) for x in row["sources"]],
    }


# The person's rows, kind by kind, in file order: what a record names by id comes before it
# (chunks before the entities they mention, the kept entity before the merged ones and the
# merge record).
READERS: tuple[tuple[Statement, Callable[[Row], Record]], ...] = (
    (q.EXPORT_MEMORY, _plain("memory")),
    (q.EXPORT_MEMORY_VERSIONS, _plain("memory_version")),
    (q.EXPORT_DOCUMENTS, _plain("document")),
    (q.EXPORT_CHUNKS, _chunk),
    (q.EXPORT_CHUNK_VERSIONS, _plain("chunk_version")),
    (q.EXPORT_DOCUMENT_REVISIONS, _plain("document_revision")),
    (q.EXPORT_ENTITIES, _entity),
    (q.EXPORT_MERGED_ENTITIES, _plain("merged_entity")),
    (q.EXPORT_ENTITY_MERGES, _plain("entity_merge")),
    (q.EXPORT_FACTS, _fact),
    (q.EXPORT_FACT_PAIRS, _plain("fact_pair")),
    (q.EXPORT_SPANS, _plain("span")),
)


def dumps(record: Record) -> str:
    return orjson.dumps(_tag(record), option=orjson.OPT_SORT_KEYS).decode()


def loads(line: str) -> Record:
    record = _untag(orjson.loads(line))
    if not isinstance(record, dict):
        raise ValueError("a record is a JSON object")
    return record


def _tag(value: Any) -> Any:
    if isinstance(value, datetime):
        return {DATETIME: value.isoformat()}
    if isinstance(value, dict):
        return {k: _tag(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tag(v) for v in value]
    return value


def _untag(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {DATETIME}:
            return datetime.fromisoformat(value[DATETIME])
        return {k: _untag(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untag(v) for v in value]
    return value
