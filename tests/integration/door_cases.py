"""The cases test_doors_agree.py runs through GraphQL and MCP: for every MCP tool a good call,
a bad argument, another scope's id (or a scope out of reach) and, derived from the good call,
GLOBAL without admin.

Placeholders in angle brackets are ids the test seeds. A write's good call runs on twins: the
GraphQL side on ``<...-1>``, the MCP side on ``<...-2>``, seeded alike, so that each door does
the same thing once and the answers compare without their ids.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

Kind = Literal["good", "bad", "foreign", "global"]
Read = Callable[[dict[str, Any]], Any]


@dataclass(frozen=True)
class Answer:
    """A call both doors answer: the GraphQL document and how to read its data, and the MCP
    tool and arguments that mean the same, with how to read its structured result."""

    kind: Kind
    name: str
    query: str
    answer: Read
    tool: str
    arguments: dict[str, Any]
    tool_answer: Read
    variables: dict[str, Any] | None = None


@dataclass(frozen=True)
class Refusal:
    """A call both doors refuse, with the one code each must give."""

    kind: Kind
    name: str
    query: str
    tool: str
    arguments: dict[str, Any]
    code: str
    variables: dict[str, Any] | None = None


SEED = "Bob waters the ficus on Mondays and keeps the watering can by the door."
CAROLS_KEY = "carol/secret"
MARKDOWN = "# Cactus\n\nWater it once a month.\n"


def _hits(hits: list[dict[str, Any]]) -> list[tuple[str, str | None, str]]:
    return [(h["kind"].lower(), h.get("key"), h["scope"]) for h in hits]


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _chain(facts: list[dict[str, Any]] | None) -> list[str] | None:
    return None if facts is None else [f["id"] for f in facts]


def _superseded(retired: dict[str, Any], new: dict[str, Any], already: bool) -> Any:
    # camelCase from GraphQL, snake_case from MCP: the same links either way.
    by = retired.get("supersededBy", retired.get("superseded_by"))
    return (already, retired["predicate"], by == new["id"], new["supersedes"] == retired["id"])


def _fact_query(fields: str) -> str:
    return "{ id text predicate supersedes supersededBy invalidAt " + fields + " }"


FACT = _fact_query("")
DOCUMENT = "{ markdown chunks { id } }"

ANSWERS: list[Answer] = [
    Answer(
        "good",
        "remember",
        'mutation { memorySet(scope: USER, key: "doors/remember", value: {a: 1}) { key value } }',
        lambda d: (d["memorySet"]["key"], d["memorySet"]["value"]),
        "remember",
        {"key": "doors/remember", "value": {"a": 1}},
        lambda r: (r["entry"]["key"], r["entry"]["value"]),
    ),
    Answer(
        "good",
        "memory_get",
        '{ memory(scope: USER, key: "plants/ficus") { key value } }',
        lambda d: (d["memory"]["key"], d["memory"]["value"]),
        "memory_get",
        {"key": "plants/ficus"},
        lambda r: (r["entry"]["key"], r["entry"]["value"]),
    ),
    Answer(
        "foreign",
        "memory_get of another user's key",
        f'{{ memory(scope: USER, key: "{CAROLS_KEY}") {{ key }} }}',
        lambda d: d["memory"],
        "memory_get",
        {"key": CAROLS_KEY},
        lambda r: r["entry"],
    ),
    Answer(
        "good",
        "memory_history",
        '{ memoryHistory(scope: USER, key: "plants/ficus") { items { value deleted } } }',
        lambda d: [(v["value"], v["deleted"]) for v in d["memoryHistory"]["items"]],
        "memory_history",
        {"key": "plants/ficus"},
        lambda r: [(v["value"], v["deleted"]) for v in r["versions"]],
    ),
    Answer(
        "foreign",
        "memory_history of another user's key",
        f'{{ memoryHistory(scope: USER, key: "{CAROLS_KEY}") {{ items {{ value }} }} }}',
        lambda d: d["memoryHistory"]["items"],
        "memory_history",
        {"key": CAROLS_KEY},
        lambda r: r["versions"],
    ),
    Answer(
        "good",
        "memory_delete",
        'mutation { memoryDelete(scope: USER, key: "gone/1") { deleted } }',
        lambda d: d["memoryDelete"]["deleted"],
        "memory_delete",
        {"key": "gone/2"},
        lambda r: r["deleted"],
    ),
    Answer(
        "foreign",
        "memory_delete of another user's key",
        f'mutation {{ memoryDelete(scope: USER, key: "{CAROLS_KEY}") {{ deleted }} }}',
        lambda d: d["memoryDelete"]["deleted"],
        "memory_delete",
        {"key": CAROLS_KEY},
        lambda r: r["deleted"],
    ),
    Answer(
        "good",
        "recall",
        "query($q: String!) { recall(scope: USER, query: $q, topK: 5)"
        " { scopes hits { kind key scope } } }",
        lambda d: (d["recall"]["scopes"], _hits(d["recall"]["hits"])),
        "recall",
        {"query": "when is the ficus watered?", "top_k": 5},
        lambda r: (r["scopes"], _hits(r["hits"])),
        {"q": "when is the ficus watered?"},
    ),
    Answer(
        "good",
        "search",
        "query($q: String!) { search(scope: USER, query: $q, topK: 5, sources: [NOTES])"
        " { scopes hits { kind key scope } } }",
        lambda d: (d["search"]["scopes"], _hits(d["search"]["hits"])),
        "search",
        {"query": "watering can", "top_k": 5, "sources": ["notes"]},
        lambda r: (r["scopes"], _hits(r["hits"])),
        {"q": "watering can"},
    ),
    Answer(
        "good",
        "import_document",
        "mutation($m: String!) { importDocument(scope: USER, markdown: $m)"
        " { summary { title chunkCount } } }",
        lambda d: (
            d["importDocument"]["summary"]["title"],
            d["importDocument"]["summary"]["chunkCount"],
        ),
        "import_document",
        {"markdown": MARKDOWN},
        lambda r: (r["title"], r["chunk_count"]),
        {"m": MARKDOWN},
    ),
    Answer(
        "good",
        "document_get",
        '{ document(scope: USER, id: "<doc>") ' + DOCUMENT + " }",
        lambda d: (d["document"]["markdown"], [c["id"] for c in d["document"]["chunks"]]),
        "document_get",
        {"id": "<doc>"},
        lambda r: (r["document"]["markdown"], [c["id"] for c in r["document"]["chunks"]]),
    ),
    Answer(
        "foreign",
        "document_get of another user's document",
        '{ document(scope: USER, id: "<foreign>") { markdown } }',
        lambda d: d["document"],
        "document_get",
        {"id": "<foreign>"},
        lambda r: r["document"],
    ),
    Answer(
        "good",
        "chunk_update",
        'mutation { updateChunk(scope: USER, id: "<chunk-1>", text: "Water it weekly.\\n",'
        " revision: 1) { text revision } }",
        lambda d: (d["updateChunk"]["text"], d["updateChunk"]["revision"]),
        "chunk_update",
        {"id": "<chunk-2>", "text": "Water it weekly.\n", "revision": 1},
        lambda r: (r["chunk"]["text"], r["chunk"]["revision"]),
    ),
    Answer(
        "good",
        "document_history",
        '{ documentHistory(scope: USER, id: "<doc>")'
        " { items { revision deleted changedChunks } } }",
        lambda d: [
            (i["revision"], i["deleted"], i["changedChunks"]) for i in d["documentHistory"]["items"]
        ],
        "document_history",
        {"id": "<doc>"},
        lambda r: [(i["revision"], i["deleted"], i["changed_chunks"]) for i in r["revisions"]],
    ),
    Answer(
        "good",
        "document_revision",
        '{ document(scope: USER, id: "<doc>", revision: 1) { markdown summary { revision } } }',
        lambda d: (d["document"]["markdown"], d["document"]["summary"]["revision"]),
        "document_revision",
        {"id": "<doc>", "revision": 1},
        lambda r: (r["document"]["markdown"], r["document"]["revision"]),
    ),
    Answer(
        "good",
        "document_diff",
        '{ documentDiff(scope: USER, id: "<doc>", fromRevision: 1, toRevision: 2) }',
        lambda d: d["documentDiff"],
        "document_diff",
        {"id": "<doc>", "from_revision": 1, "to_revision": 2},
        lambda r: r["diff"],
    ),
    # After the reads of <doc>: each door writes a revision equal to revision 1.
    Answer(
        "good",
        "restore_document",
        'mutation { restoreDocument(scope: USER, id: "<doc>", revision: 1) ' + DOCUMENT + " }",
        lambda d: (
            d["restoreDocument"]["markdown"],
            [c["id"] for c in d["restoreDocument"]["chunks"]],
        ),
        "restore_document",
        {"id": "<doc>", "revision": 1},
        lambda r: (r["document"]["markdown"], [c["id"] for c in r["document"]["chunks"]]),
    ),
    Answer(
        "good",
        "assert_facts",
        'mutation { assertFacts(scope: USER, place: false, facts: [{subject: {type: "plant",'
        ' name: "Aloe 1"}, predicate: "needs", objectValue: "sun"}]) { created fact { predicate'
        " } } }",
        lambda d: [(a["created"], a["fact"]["predicate"]) for a in d["assertFacts"]],
        "assert_facts",
        {
            "facts": [
                {
                    "subject": {"type": "plant", "name": "Aloe 2"},
                    "predicate": "needs",
                    "value": "sun",
                }
            ],
            "place": False,
        },
        lambda r: [(a["created"], a["fact"]["predicate"]) for a in r["results"]],
    ),
    Answer(
        "good",
        "supersede_fact",
        'mutation { supersedeFact(scope: USER, id: "<old-1>", byId: "<new-1>") { already'
        f" retired {FACT} replacement {FACT} }} }}",
        lambda d: _superseded(
            d["supersedeFact"]["retired"],
            d["supersedeFact"]["replacement"],
            d["supersedeFact"]["already"],
        ),
        "supersede_fact",
        {"id": "<old-2>", "by_id": "<new-2>"},
        lambda r: _superseded(r["retired"], r["replacement"], r["already"]),
    ),
    Answer(
        "good",
        "fact_history",
        '{ factHistory(scope: USER, id: "<old-1>") { items { id } } }',
        lambda d: _chain(d["factHistory"]["items"]),
        "fact_history",
        {"id": "<old-1>"},
        lambda r: _chain(r["facts"]),
    ),
    Answer(
        "foreign",
        "fact_history of another user's fact",
        '{ factHistory(scope: USER, id: "<foreign-fact>") { items { id } } }',
        lambda d: d["factHistory"],
        "fact_history",
        {"id": "<foreign-fact>"},
        lambda r: r["facts"],
    ),
    Answer(
        "good",
        "retract_fact",
        'mutation { retractFact(scope: USER, id: "<ret-1>", invalidAt: "2025-01-01T00:00:00Z")'
        f" {FACT} }}",
        lambda d: (d["retractFact"]["predicate"], _time(d["retractFact"]["invalidAt"])),
        "retract_fact",
        {"id": "<ret-2>", "invalid_at": "2025-01-01T00:00:00Z"},
        lambda r: (r["fact"]["predicate"], _time(r["fact"]["invalid_at"])),
    ),
    # After every write above, so both doors read the same facts.
    Answer(
        "good",
        "facts",
        '{ facts(scope: USER, predicate: "needs", includeRetired: true) { items { id } } }',
        lambda d: [f["id"] for f in d["facts"]["items"]],
        "facts",
        {"predicate": "needs", "include_retired": True},
        lambda r: [f["id"] for f in r["facts"]],
    ),
    Answer(
        "good",
        "harvest",
        'mutation { harvest(compactionGeneration: 3, spans: [{text: "Bob repotted the aloe."}])'
        " { accepted duplicates spanIds compactionGeneration } }",
        lambda d: (
            d["harvest"]["accepted"],
            d["harvest"]["duplicates"],
            len(d["harvest"]["spanIds"]),
            d["harvest"]["compactionGeneration"],
        ),
        "harvest",
        {"compaction_generation": 3, "spans": [{"text": "Bob repotted the aloe."}]},
        lambda r: (
            r["receipt"]["accepted"],
            r["receipt"]["duplicates"],
            len(r["receipt"]["span_ids"]),
            r["receipt"]["compaction_generation"],
        ),
    ),
    # The consolidator may move spans between states while the doors read; the total stays.
    Answer(
        "good",
        "pending_work",
        "{ pendingWork(scope: USER) { scope queued leased done dead } }",
        lambda d: (
            d["pendingWork"]["scope"],
            sum(d["pendingWork"][k] for k in ("queued", "leased", "done", "dead")),
        ),
        "pending_work",
        {},
        lambda r: (
            r["work"]["scope"],
            sum(r["work"][k] for k in ("queued", "leased", "done", "dead")),
        ),
    ),
    Answer(
        "good",
        "sql_exec",
        'mutation { sqlExec(scope: USER, statements: [{statement: "CREATE TABLE IF NOT EXISTS'
        ' d (n INTEGER)"}, {statement: "INSERT INTO d (n) VALUES (1)"}]) { results {'
        " rowsAffected } } }",
        lambda d: [r["rowsAffected"] for r in d["sqlExec"]["results"]],
        "sql_exec",
        {
            "statements": [
                {"statement": "CREATE TABLE IF NOT EXISTS d (n INTEGER)"},
                {"statement": "INSERT INTO d (n) VALUES (1)"},
            ]
        },
        lambda r: [s["rows_affected"] for s in r["results"]],
    ),
    Answer(
        "good",
        "sql_query",
        '{ sqlQuery(scope: USER, statement: "SELECT count(*) AS n FROM d") { columns rows } }',
        lambda d: (d["sqlQuery"]["columns"], d["sqlQuery"]["rows"]),
        "sql_query",
        {"statement": "SELECT count(*) AS n FROM d"},
        lambda r: (r["columns"], r["rows"]),
    ),
]

BAD, FOREIGN = "INVALID_ARGUMENT", "NOT_FOUND"
FORBIDDEN = "FORBIDDEN"


def _r(kind: Kind, name: str, query: str, tool: str, args: dict[str, Any], code: str) -> Refusal:
    return Refusal(kind, name, query, tool, args, code)


LONG_TITLE = "t" * 600
# fmt: off
REFUSALS: list[Refusal] = [
    _r("bad", "a blank key", 'mutation { memorySet(scope: USER, key: "", value: 1) { key } }',
       "remember", {"key": "", "value": 1}, BAD),
    _r("bad", "a blank key to read", '{ memory(scope: USER, key: "") { key } }',
       "memory_get", {"key": ""}, BAD),
    _r("bad", "a blank key to delete",
       'mutation { memoryDelete(scope: USER, key: "") { deleted } }',
       "memory_delete", {"key": ""}, BAD),
    _r("bad", "a blank key's history", '{ memoryHistory(scope: USER, key: "") { hasMore } }',
       "memory_history", {"key": ""}, BAD),
    _r("bad", "topK 0", '{ recall(scope: USER, query: "x", topK: 0) { scopes } }',
       "recall", {"query": "x", "top_k": 0}, BAD),
    _r("bad", "no sources", '{ search(scope: USER, query: "x", sources: []) { scopes } }',
       "search", {"query": "x", "sources": []}, BAD),
    _r("bad", "an over-long title",
       f'mutation {{ importDocument(scope: USER, markdown: "# A", title: "{LONG_TITLE}")'
       " { markdown } }",
       "import_document", {"markdown": "# A", "title": LONG_TITLE}, BAD),
    _r("bad", "a blank document id", '{ document(scope: USER, id: "") { markdown } }',
       "document_get", {"id": ""}, BAD),
    _r("bad", "a stale chunk revision",
       'mutation { updateChunk(scope: USER, id: "<chunk-1>", text: "x", revision: 1) { id } }',
       "chunk_update", {"id": "<chunk-1>", "text": "x", "revision": 1}, "CONFLICT"),
    _r("bad", "a history page of 0", '{ documentHistory(scope: USER, id: "<doc>", limit: 0)'
       " { hasMore } }", "document_history", {"id": "<doc>", "limit": 0}, BAD),
    _r("bad", "a revision that does not exist",
       '{ document(scope: USER, id: "<doc>", revision: 99) { markdown } }',
       "document_revision", {"id": "<doc>", "revision": 99}, FOREIGN),
    _r("bad", "fromRevision after toRevision",
       '{ documentDiff(scope: USER, id: "<doc>", fromRevision: 2, toRevision: 1) }',
       "document_diff", {"id": "<doc>", "from_revision": 2, "to_revision": 1}, BAD),
    _r("bad", "restore a missing revision",
       'mutation { restoreDocument(scope: USER, id: "<doc>", revision: 99) { markdown } }',
       "restore_document", {"id": "<doc>", "revision": 99}, FOREIGN),
    _r("bad", "no facts", "mutation { assertFacts(scope: USER, facts: []) { created } }",
       "assert_facts", {"facts": []}, BAD),
    _r("bad", "a page of 0 facts", "{ facts(scope: USER, limit: 0) { hasMore } }",
       "facts", {"limit": 0}, BAD),
    _r("bad", "a history page of 0 facts",
       '{ factHistory(scope: USER, id: "<old-1>", limit: 0) { hasMore } }',
       "fact_history", {"id": "<old-1>", "limit": 0}, BAD),
    _r("bad", "a fact superseding itself",
       'mutation { supersedeFact(scope: USER, id: "<old-1>", byId: "<old-1>") { already } }',
       "supersede_fact", {"id": "<old-1>", "by_id": "<old-1>"}, BAD),
    _r("bad", "an end before the start",
       'mutation { retractFact(scope: USER, id: "<hist>", invalidAt: "2019-01-01T00:00:00Z")'
       " { id } }",
       "retract_fact", {"id": "<hist>", "invalid_at": "2019-01-01T00:00:00Z"}, BAD),
    _r("bad", "no spans", "mutation { harvest(compactionGeneration: 0, spans: []) { accepted } }",
       "harvest", {"compaction_generation": 0, "spans": []}, BAD),
    _r("bad", "pending work of AGENT", "{ pendingWork(scope: AGENT) { queued } }",
       "pending_work", {"scope": "AGENT"}, BAD),
    _r("bad", "a write in sqlQuery",
       '{ sqlQuery(scope: USER, statement: "DELETE FROM d") { rows } }',
       "sql_query", {"statement": "DELETE FROM d"}, BAD),
    _r("bad", "no statements", "mutation { sqlExec(scope: USER, statements: []) { results"
       " { rowsAffected } } }", "sql_exec", {"statements": []}, BAD),
    # Another user's ids answer like missing ones; a scope out of reach is FORBIDDEN.
    _r("foreign", "AGENT without an agent",
       'mutation { memorySet(scope: AGENT, key: "k", value: 1) { key } }',
       "remember", {"key": "k", "value": 1, "scope": "AGENT"}, FORBIDDEN),
    _r("foreign", "recall in AGENT", '{ recall(scope: AGENT, query: "x") { scopes } }',
       "recall", {"query": "x", "scope": "AGENT"}, FORBIDDEN),
    _r("foreign", "search also in AGENT",
       '{ search(scope: USER, query: "x", alsoScopes: [AGENT]) { scopes } }',
       "search", {"query": "x", "also_scopes": ["AGENT"]}, FORBIDDEN),
    _r("foreign", "import into AGENT",
       'mutation { importDocument(scope: AGENT, markdown: "# A") { markdown } }',
       "import_document", {"markdown": "# A", "scope": "AGENT"}, FORBIDDEN),
    _r("foreign", "another user's chunk",
       'mutation { updateChunk(scope: USER, id: "<foreign-chunk>", text: "x", revision: 1)'
       " { id } }", "chunk_update", {"id": "<foreign-chunk>", "text": "x", "revision": 1},
       FOREIGN),
    _r("foreign", "another user's document history",
       '{ documentHistory(scope: USER, id: "<foreign>") { hasMore } }',
       "document_history", {"id": "<foreign>"}, FOREIGN),
    _r("foreign", "another user's document revision",
       '{ document(scope: USER, id: "<foreign>", revision: 1) { markdown } }',
       "document_revision", {"id": "<foreign>", "revision": 1}, FOREIGN),
    _r("foreign", "another user's document diff",
       '{ documentDiff(scope: USER, id: "<foreign>", fromRevision: 1, toRevision: 2) }',
       "document_diff", {"id": "<foreign>", "from_revision": 1, "to_revision": 2}, FOREIGN),
    _r("foreign", "restore another user's document",
       'mutation { restoreDocument(scope: USER, id: "<foreign>", revision: 1) { markdown } }',
       "restore_document", {"id": "<foreign>", "revision": 1}, FOREIGN),
    _r("foreign", "facts in AGENT",
       'mutation { assertFacts(scope: AGENT, facts: [{subject: {type: "a", name: "b"},'
       ' predicate: "c", objectValue: "d"}]) { created } }',
       "assert_facts",
       {"facts": [{"subject": {"type": "a", "name": "b"}, "predicate": "c", "value": "d"}],
        "scope": "AGENT"}, FORBIDDEN),
    _r("foreign", "list facts in AGENT", "{ facts(scope: AGENT) { hasMore } }",
       "facts", {"scope": "AGENT"}, FORBIDDEN),
    _r("foreign", "supersede another user's fact",
       'mutation { supersedeFact(scope: USER, id: "<foreign-fact>", byId: "<hist>") { already } }',
       "supersede_fact", {"id": "<foreign-fact>", "by_id": "<hist>"}, FOREIGN),
    _r("foreign", "retract another user's fact",
       'mutation { retractFact(scope: USER, id: "<foreign-fact>") { id } }',
       "retract_fact", {"id": "<foreign-fact>"}, FOREIGN),
    _r("foreign", "the tenant's pending work as a member",
       "{ pendingWork(scope: TENANT) { queued } }", "pending_work", {"scope": "TENANT"},
       FORBIDDEN),
    _r("foreign", "SQL in TENANT", '{ sqlQuery(scope: TENANT, statement: "SELECT 1") { rows } }',
       "sql_query", {"statement": "SELECT 1", "scope": "TENANT"}, FORBIDDEN),
    _r("foreign", "SQL writes in TENANT",
       'mutation { sqlExec(scope: TENANT, statements: [{statement: "SELECT 1"}]) { results'
       " { rowsAffected } } }", "sql_exec",
       {"statements": [{"statement": "SELECT 1"}], "scope": "TENANT"}, FORBIDDEN),
]
# fmt: on

# Tools with no case of a kind, and why; the test fails for any other gap.
EXEMPT: dict[tuple[str, Kind], str] = {
    ("harvest", "foreign"): "no scope or id argument: it always writes the token's own user",
    ("harvest", "global"): "no scope argument",
}


# Queues live in USER scopes only: the resolver refuses the scope itself, not the caller.
GLOBAL_CODES = {"pending_work": BAD}


def global_refusals() -> list[Refusal]:
    """GLOBAL without admin, for every good call that names its scope: FORBIDDEN (or the code
    in ``GLOBAL_CODES``), before anything is read or written."""
    found = []
    for a in ANSWERS:
        if a.kind != "good" or "scope: USER" not in a.query:
            continue
        query = a.query.replace("scope: USER", "scope: GLOBAL")
        arguments = {**a.arguments, "scope": "GLOBAL"}
        code = GLOBAL_CODES.get(a.tool, FORBIDDEN)
        name = f"{a.name} in GLOBAL"
        found.append(Refusal("global", name, query, a.tool, arguments, code, a.variables))
    return found
