"""Every Cypher statement is a named constant that filters on the scope key."""

from __future__ import annotations

import importlib
import pkgutil
import re

import palimpsest.cypher
from palimpsest.cypher.driver.executor import Statement

SCOPED = (
    "Memory",
    "MemoryVersion",
    "Scope",
    "Document",
    "Chunk",
    "Entity",
    "FACT",
    "Source",
    "PendingSpan",
    "Ontology",
    "TermStats",
    "Erasure",
    "ChunkVersion",
    "DocumentRevision",
    "EntityMerge",
    "MergedEntity",
    "ErasurePolicy",
    "Passage",
    "FactPair",
)
RELATIONSHIPS = {"HAS_ROOT", "HAS_CHILD", "NEXT", "MENTIONS"}
# TenantShard: the shard directory's rows (tenant -> shard), bookkeeping like SchemaInfo.
ALLOWED_LABELS = {*SCOPED, *RELATIONSHIPS, "SchemaInfo", "TenantShard"}
SCHEMA_MODULE = "palimpsest.cypher.schema"
# A model migration's statements (palimpsest reembed): the schema record, each embedding
# slot's indexes, and maintenance batches over every scope's vectors, like schema.py's.
SLOTS_MODULE = "palimpsest.cypher.embedding_slots"
# The consolidator's queue reads across scopes in exactly these statements. Each returns scope
# ids or counts, never span content: a worker then reads and writes a scope's spans only
# through a handle bound to it (resolved for the consolidator acting for the span's owner).
QUEUE_MODULE = "palimpsest.cypher.queue"
UNSCOPED_QUEUE = {"PENDING_SCOPES", "QUEUE_GAUGES", "TENANT_QUEUE_COUNTS"}
SWEEP_MODULE = "palimpsest.cypher.sweep"
UNSCOPED_SWEEP = {"SWEEP_SCOPES"}  # the retention sweep's walk: scope ids in key order
# The executor's wait for a client's bookmarks, which reads no row at all.
EXECUTOR_MODULE = "palimpsest.cypher.driver.executor"
UNSCOPED_EXECUTOR = {"AWAIT_BOOKMARKS"}
# The shard directory (tenant -> shard) on the designated shard, the server's bookkeeping.
DIRECTORY_MODULE = "palimpsest.cypher.shards.directory"
# Erasure's search for the shared scopes one person wrote in: scope ids only.
AUTHORED_MODULE = "palimpsest.cypher.authored"
UNSCOPED_AUTHORED = {"AUTHORED_SCOPES"}


def all_statements() -> list[tuple[str, Statement]]:
    found = []
    for info in pkgutil.walk_packages(palimpsest.cypher.__path__, "palimpsest.cypher."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            group = value if isinstance(value, tuple) else (value,)
            found += [(module.__name__, s) for s in group if isinstance(s, Statement)]
    return found


def test_statements_are_found_and_uniquely_named() -> None:
    statements = all_statements()
    assert len(statements) > 20
    names = [s.name for _, s in statements]
    assert len(names) == len(set(names))


def test_only_schema_statements_are_unscoped() -> None:
    # Unscoped statements run on the unbound handle, so they are few, named and DDL only,
    # plus the named queue exceptions.
    for module, s in all_statements():
        exception = (
            (module == QUEUE_MODULE and s.name in UNSCOPED_QUEUE)
            or (module == EXECUTOR_MODULE and s.name in UNSCOPED_EXECUTOR)
            or (module == SWEEP_MODULE and s.name in UNSCOPED_SWEEP)
            or (module == AUTHORED_MODULE and s.name in UNSCOPED_AUTHORED)
        )
        schema = module in (SCHEMA_MODULE, SLOTS_MODULE, DIRECTORY_MODULE)
        assert s.scoped is not (schema or exception), s.name


def test_the_bookmark_wait_reads_nothing() -> None:
    found = [s for m, s in all_statements() if m == EXECUTOR_MODULE]
    assert {s.name for s in found} == UNSCOPED_EXECUTOR
    assert all(s.text == "RETURN 1 AS reached" for s in found)


def test_unscoped_queue_statements_return_no_span_content() -> None:
    found = {s.name: s for m, s in all_statements() if m == QUEUE_MODULE and not s.scoped}
    assert set(found) == UNSCOPED_QUEUE
    for s in found.values():
        returned = s.text.rsplit("RETURN", 1)[1]
        for content in ("text", "facts", "speaker", "source_id", "p {", "p.*"):
            assert content not in returned, (s.name, content)


def test_the_sweep_walk_returns_scope_ids_only() -> None:
    found = {s.name: s for m, s in all_statements() if m == SWEEP_MODULE and not s.scoped}
    assert set(found) == UNSCOPED_SWEEP
    returned = found["SWEEP_SCOPES"].text.rsplit("RETURN", 1)[1].split("ORDER BY")[0]
    columns = {c.strip().split(" AS ")[1] for c in returned.split(",")}
    assert columns == {"tenant_id", "scope", "owner_id", "scope_key"}


def test_the_authored_scopes_search_returns_scope_ids_only() -> None:
    found = {s.name: s for m, s in all_statements() if m == AUTHORED_MODULE and not s.scoped}
    assert set(found) == UNSCOPED_AUTHORED
    returned = found["AUTHORED_SCOPES"].text.rsplit("RETURN", 1)[1]
    assert returned.split("ORDER BY")[0].split() == ["scope,", "owner,", "tenant"]


def test_every_scoped_statement_filters_on_scope_key() -> None:
    # The planner-level proof is tests/integration/test_statement_plans.py; this is the
    # quick textual guard that runs without a server.
    for _, s in all_statements():
        if s.scoped:
            assert "$scope_key" in s.text, s.name


def test_labels_and_types_come_from_the_allow_list() -> None:
    for _, s in all_statements():
        for label in re.findall(r"\(\w*:(\w+)", s.text) + re.findall(r"\[\w*:(\w+)", s.text):
            assert label in ALLOWED_LABELS, (s.name, label)


def test_values_are_parameters_not_literals() -> None:
    # Non-empty string literals are allowed only in schema DDL and for the fixed schema node.
    for module, s in all_statements():
        if module == SCHEMA_MODULE:
            continue
        literals = re.findall(r"'[^']*'", s.text)
        assert all(lit == "''" for lit in literals) or s.name == "MERGE_SCHEMA_INFO", s.name


# The scope node's ``memory_bytes`` bounds the bytes of the scope's notes (the quota's fast
# path), so a statement that adds or removes notes keeps it, or is listed here with the
# reason it need not.
KEEPS_MEMORY_BYTES_ELSEWHERE = {
    "IMPORT_MEMORY": "the importer runs FORGET_MEMORY_BYTES in the same transaction",
    "ERASE_MEMORY": "a scope's erasure deletes its :Scope node, and the bound with it",
    "ARCHIVE_EXPIRED_NOTES": "the sweep runs COUNT_SWEPT in the same transaction",
}


def test_every_statement_adding_or_removing_notes_keeps_the_scope_bound() -> None:
    writers = set()
    for _, s in all_statements():
        notes = re.findall(r"(?:MATCH|MERGE|CREATE) \((\w+):Memory\b", s.text)
        made = re.search(r"(?:MERGE|CREATE) \(\w+:Memory\b", s.text)
        deleted = any(re.search(rf"DELETE {v}\b", s.text) for v in notes)
        if made or deleted:
            writers.add(s.name)
            if s.name not in KEEPS_MEMORY_BYTES_ELSEWHERE:
                assert "memory_bytes" in s.text, s.name
    assert writers >= {"UPSERT_MEMORY", "DELETE_MEMORY", *KEEPS_MEMORY_BYTES_ELSEWHERE}
