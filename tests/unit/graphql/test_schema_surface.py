"""The GraphQL surface: no argument or input field can name an owner, tenant or scope key."""

from __future__ import annotations

import re
from typing import Any

from strawberry.types.base import get_object_definition
from strawberry.utils.str_converters import to_camel_case

from palimpsest.graphql.admin import AdminMutation, AdminQuery
from palimpsest.graphql.schema import build_schema

FORBIDDEN = re.compile(r"(tenant|owner|scope_?key|user_?id|agent_?name|principal)", re.I)
# The one exception: admin fields that name a user, kept together in graphql/admin.py and
# admin-checked in identity.person_refs.
ADMIN_NAMES_A_USER = {"Mutation.eraseUser(userId)"}

INTROSPECT = """
{ __schema { types { name kind
    fields { name args { name } }
    inputFields { name } } } }
"""


def test_no_argument_or_input_field_names_an_owner() -> None:
    result = build_schema().execute_sync(INTROSPECT)
    assert result.errors is None
    data: dict[str, Any] = result.data or {}
    names: list[str] = []
    for t in data["__schema"]["types"]:
        if t["name"].startswith("__"):
            continue
        for field in t["fields"] or []:
            names += [f"{t['name']}.{field['name']}({a['name']})" for a in field["args"]]
        names += [f"{t['name']}.{f['name']}" for f in t["inputFields"] or []]
    assert names, "introspection found no arguments at all"
    offending = [n for n in names if FORBIDDEN.search(n.rsplit(".", 1)[-1])]
    assert sorted(offending) == sorted(ADMIN_NAMES_A_USER)


def test_the_fields_naming_a_user_are_in_the_admin_module() -> None:
    admin = {
        f"{kind}.{to_camel_case(f.python_name)}"
        for kind, t in (("Query", AdminQuery), ("Mutation", AdminMutation))
        for f in get_object_definition(t, strict=True).fields
    }
    assert {name.split("(")[0] for name in ADMIN_NAMES_A_USER} <= admin


def test_scope_enum_has_the_four_scopes() -> None:
    result = build_schema().execute_sync('{ __type(name: "Scope") { enumValues { name } } }')
    assert result.data is not None
    assert [v["name"] for v in result.data["__type"]["enumValues"]] == [
        "AGENT",
        "USER",
        "TENANT",
        "GLOBAL",
    ]


# -- one shape for the whole API (issue 10, item 4) ----------------------------------------

TYPES = """
fragment Ref on __Type { kind name ofType { kind name ofType { kind name ofType {
  kind name ofType { kind name } } } } }
{ __schema {
    queryType { name } mutationType { name }
    types { name kind
      fields { name type { ...Ref } args { name type { ...Ref } } }
      inputFields { name type { ...Ref } } } } }
"""

# Lists whose length the request bounds (a batch's results, topK hits, `limit` of a walk),
# or a record bounds (a document's chunks, a query's rows under the row cap), or that are
# tiny closed sets: these stay plain lists. Every other list is a Page.
BOUNDED_LISTS = {
    "EntityMerge.addedAliases",  # the merged entities' names (at most 50 entities)
    "EntityMerge.mergedIds",  # at most 50
    "Query.entityMerges",  # limit at most 100
    "Mutation.unmergeEntities",  # the kept entity and at most 50 merged ones
    "Query.placement",
    "Mutation.importDocuments",
    "Mutation.assertFacts",
    "Document.chunks",
    "Fact.sources",
    "PersonalExport.lines",
    "GraphRecallResult.seeds",
    "GraphRecallResult.entities",
    "GraphRecallResult.facts",
    "GraphRecallResult.chunks",
    "RecallResult.hits",
    "ContextBlock.items",  # bounded by the token budget (a piece costs at least one token)
    "RecallResult.scopes",
    "RecallResult.appliedFilters",  # one per kind asked for
    "KindFilter.filters",  # at most three
    "Explain.legs",
    "Explain.boosts",
    "Explain.duplicates",  # at most the pool of one recall (2 x topK, capped)
    "Explain.timeRanges",  # at most timerefs.MAX_RANGES (8)
    "SqlQueryResult.columns",
    "SqlQueryResult.rows",
    "SqlExecResult.results",
    "Me.roles",
    "Me.memoryScopes",
    "Me.sqlScopes",
    "Entity.aliases",  # at most 50
    "EmbeddingStatus.planes",  # the five planes with vectors
    "HarvestReceipt.spanIds",  # one per span of the request
    "Mutation.requeueDeadLetters",  # a subset of the ids the request names
    "FactAssertion.closed",  # the closures the one write made
    "OntologyInfo.singleValued",  # bounded by the ontology's size limits
    "SingleValuedPredicate.spellings",
    "SingleValuedPredicate.typeSpellings",  # a type's aliases: bounded by the ontology's size
    "PlacementResult.singleValued",
    # LangGraph's store pages by offset: at most `limit` (1000), `offset` at most 10000.
    "Query.storeSearch",
    "Query.storeNamespaces",
    "StoreItem.namespace",  # the labels of one key (a key is at most 512 bytes)
    "StoreNamespace.labels",
    "RetentionPolicy.overridden",  # at most the policy's three windows
    "Usage.planes",  # one row per plane, a fixed set
}
PAGED = {
    "entityDuplicates",
    "memories",
    "memoryHistory",
    "documents",
    "documentHistory",
    "facts",
    "factHistory",
    "factConflicts",
    "entities",
    "sqlDatabases",
    "deadLetters",
    "erasures",
}


def surface() -> dict[str, Any]:
    result = build_schema().execute_sync(TYPES)
    assert result.errors is None
    data: dict[str, Any] = result.data or {}
    schema: dict[str, Any] = data["__schema"]
    return schema


def named(ref: dict[str, Any]) -> tuple[str, bool]:
    """The named type under NON_NULL/LIST wrappers, and whether a LIST was among them."""
    listed = False
    while ref["kind"] in ("NON_NULL", "LIST"):
        listed = listed or ref["kind"] == "LIST"
        ref = ref["ofType"]
    return ref["name"], listed


def fields(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{t['name']}.{f['name']}", f)
        for t in schema["types"]
        if not t["name"].startswith("__") and t["kind"] == "OBJECT"
        for f in t["fields"] or []
    ]


def arguments_and_inputs(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = [(f"{name}({a['name']})", a) for name, f in fields(schema) for a in f["args"]]
    found += [
        (f"{t['name']}.{f['name']}", f)
        for t in schema["types"]
        if t["kind"] == "INPUT_OBJECT"
        for f in t["inputFields"]
    ]
    return found


def test_every_list_that_can_grow_is_a_page_with_limit_and_after() -> None:
    schema = surface()
    by_name = {t["name"]: t for t in schema["types"]}
    plain = sorted(name for name, f in fields(schema) if named(f["type"])[1])
    page_items = {"items", "cursor", "hasMore"}
    pages = {
        name: f
        for name, f in fields(schema)
        if named(f["type"])[0].endswith("Page") and not name.endswith(".items")
    }
    assert sorted(p for p in plain if not p.endswith("Page.items")) == sorted(BOUNDED_LISTS)
    assert {name.split(".")[1] for name in pages} == PAGED
    for name, f in pages.items():
        assert [a["name"] for a in f["args"]][-2:] == ["limit", "after"], name
        page = by_name[named(f["type"])[0]]
        assert {x["name"] for x in page["fields"]} == page_items
        shapes = {x["name"]: (x["type"]["kind"], named(x["type"])) for x in page["fields"]}
        assert shapes["cursor"] == ("SCALAR", ("String", False))
        assert shapes["hasMore"] == ("NON_NULL", ("Boolean", False))
        assert shapes["items"][1][1] is True


def test_every_id_is_an_id_and_every_date_input_is_an_instant() -> None:
    schema = surface()
    ids = [
        (name, named(x["type"])[0])
        for name, x in fields(schema) + arguments_and_inputs(schema)
        if re.search(r"(^|\.|\()(id|\w+Id|\w+Ids)\)?$", name)
        and name != "SqlStatementResult.lastInsertId"  # SQLite's row number, not a record id
    ]
    assert len(ids) > 20
    assert [i for i in ids if i[1] != "ID"] == []
    dates = [
        (name, named(x["type"])[0])
        for name, x in arguments_and_inputs(schema)
        if re.search(r"(At|asOf|\.from|\.to)\)?$", name)
    ]
    assert {n for n, _ in dates} >= {
        "Query.facts(asOf)",
        "Query.facts(knownAt)",
        "Query.graphRecall(asOf)",
        "Mutation.retractFact(invalidAt)",
        "Mutation.importDocument(observedAt)",
        "FactInput.validAt",
        "WhenInput.from",
        "WhenInput.to",
        "WhenInput.knownAt",
        "DocumentInput.observedAt",
        "SpanInput.observedAt",
        "Mutation.memorySet(validAt)",
        "Query.memory(asOf)",
    }
    assert [d for d in dates if d[1] != "Instant"] == []
    outputs = [named(x["type"])[0] for name, x in fields(schema) if name.endswith("At")]
    assert set(outputs) == {"DateTime"}


def test_closed_sets_are_enums() -> None:
    types = dict(fields(surface()))
    expected = {
        "Chunk.type": "ChunkType",
        "ChunkRef.type": "ChunkType",
        "RecallHit.chunkType": "ChunkType",
        "RecallHit.kind": "Source",
        "Provenance.origin": "Origin",
        "Fact.verdict": "Verdict",
        "PlacementResult.reason": "PlacementReason",
        "TimeFilter.mode": "TimeFilterMode",
        "OntologyInfo.status": "OntologyStatus",
        "Me.roles": "Role",
        "MemoryEntry.scope": "Scope",
        "FactSource.origin": "Origin",
        "ErasureReceipt.kind": "ErasureKind",
        "ErasureReceipt.status": "ErasureStatus",
    }
    assert {name: named(types[name]["type"])[0] for name in expected} == expected


def test_mutation_names_follow_the_rule() -> None:
    """verbNoun, except the memory* and sql* families, which keep their plane prefix."""
    schema = surface()
    mutations = [name.split(".")[1] for name, _ in fields(schema) if name.startswith("Mutation.")]
    families = [m for m in mutations if re.match(r"^(memory|sql)[A-Z]", m)]
    assert len(families) == 8
    verbs = (
        "import|update|delete|supersede|retract|judge|set|assert|erase|export|harvest|requeue"
        "|restore|merge|unmerge"
    )
    verb_first = re.compile(rf"^({verbs})([A-Z]\w*)?$")
    assert [m for m in mutations if m not in families and not verb_first.match(m)] == []
