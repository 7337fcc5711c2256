"""The calls test_doors_agree.py makes through GraphQL and MCP, and the answers it compares:
for every MCP tool a good call, and another scope's id where both doors answer it (as a
missing one); the refusals are in door_refusals.py.

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


def _entry(entry: dict[str, Any]) -> Any:
    return (entry["key"].rsplit("-", 1)[0], entry["value"], entry["pinned"])


def _block(block: dict[str, Any]) -> Any:
    # GraphQL's enums are upper case (HIT, NOTES); the MCP tool writes kind and source lower.
    items = [
        {**i, "kind": i["kind"].lower(), "source": i["source"].lower()} for i in block["items"]
    ]
    return (block["text"], block["tokens"], block["truncated"], items)


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
        # twins: a new key on each side, so each door's pin is its own
        'mutation { memorySet(scope: USER, key: "doors/remember-1", value: {a: 1}, pinned: true)'
        " { key value pinned } }",
        lambda d: _entry(d["memorySet"]),
        "remember",
        {"key": "doors/remember-2", "value": {"a": 1}, "pinned": True},
        lambda r: _entry(r["entry"]),
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
        "context",
        "query($q: String!) { context(scope: USER, query: $q, budgetTokens: 300)"
        " { text tokens truncated items { kind source scope id tokens cut } } }",
        lambda d: _block(d["context"]),
        "context",
        {"query": "when is the ficus watered?", "budget_tokens": 300},
        _block,
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
        "memory view of the tree",
        '{ memoryFile(scope: USER, path: "/memories") { text path } }',
        lambda d: (d["memoryFile"]["text"], d["memoryFile"]["path"]),
        "memory",
        {"command": "view", "path": "/memories"},
        lambda r: (r["text"], r["path"]),
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
