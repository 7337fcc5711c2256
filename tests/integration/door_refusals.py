"""The refusals test_doors_agree.py sends through GraphQL and MCP (see door_cases.py): for
every tool a bad argument and another scope's id (or a scope out of reach), each with the one
code both doors must give, and GLOBAL without admin derived from each good call."""

from __future__ import annotations

import base64
import json
from typing import Any

from tests.integration.door_cases import ANSWERS, Kind, Refusal

BAD, FOREIGN = "INVALID_ARGUMENT", "NOT_FOUND"
FORBIDDEN = "FORBIDDEN"


def _r(kind: Kind, name: str, query: str, tool: str, args: dict[str, Any], code: str) -> Refusal:
    return Refusal(kind, name, query, tool, args, code)


LONG_TITLE = "t" * 600


def forged(list_name: str, *position: Any) -> str:
    """A cursor spelled like the server's, naming a position it never wrote."""
    raw = json.dumps({"l": list_name, "p": list(position)}).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


# Positions the database could not take: strict parsing refuses them at the door (issue 46).
PAST_64_BITS = forged("documentHistory", str(2**63))
SUPERSCRIPT = forged("documentHistory", "\u00b2")
PAST_9999 = forged("memoryHistory", "9999-12-31T23:59:59-12:00")
BEYOND_INT = str(2**64)
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
    _r("bad", "a history cursor past 64 bits",
       f'{{ documentHistory(scope: USER, id: "<doc>", after: "{PAST_64_BITS}") {{ hasMore }} }}',
       "document_history", {"id": "<doc>", "after": PAST_64_BITS}, BAD),
    _r("bad", "a history cursor with a superscript digit",
       f'{{ documentHistory(scope: USER, id: "<doc>", after: "{SUPERSCRIPT}") {{ hasMore }} }}',
       "document_history", {"id": "<doc>", "after": SUPERSCRIPT}, BAD),
    _r("bad", "a memory history cursor past year 9999",
       f'{{ memoryHistory(scope: USER, key: "plants/ficus", after: "{PAST_9999}")'
       " { hasMore } }", "memory_history", {"key": "plants/ficus", "after": PAST_9999}, BAD),
    _r("bad", "a chunk revision past 64 bits",
       f'mutation {{ updateChunk(scope: USER, id: "<chunk-1>", text: "x", revision: {BEYOND_INT})'
       " { id } }",
       "chunk_update", {"id": "<chunk-1>", "text": "x", "revision": 2**64}, BAD),
    _r("bad", "true as a revision",
       'mutation { restoreDocument(scope: USER, id: "<doc>", revision: true) { markdown } }',
       "restore_document", {"id": "<doc>", "revision": True}, BAD),
    _r("bad", "an argument the operation does not take",
       '{ document(scope: USER, id: "<doc>", owner: "doors-carol") { markdown } }',
       "document_get", {"id": "<doc>", "owner": "doors-carol"}, BAD),
    # Another user's ids answer like missing ones; a scope out of reach is FORBIDDEN.
    _r("foreign", "AGENT without an agent",
       'mutation { memorySet(scope: AGENT, key: "k", value: 1) { key } }',
       "remember", {"key": "k", "value": 1, "scope": "AGENT"}, FORBIDDEN),
    _r("foreign", "recall in AGENT", '{ recall(scope: AGENT, query: "x") { scopes } }',
       "recall", {"query": "x", "scope": "AGENT"}, FORBIDDEN),
    _r("bad", "a context budget of 0",
       '{ context(scope: USER, query: "x", budgetTokens: 0) { tokens } }',
       "context", {"query": "x", "budget_tokens": 0}, BAD),
    _r("bad", "a context minScore of 2",
       '{ context(scope: USER, query: "x", minScore: 2) { tokens } }',
       "context", {"query": "x", "min_score": 2}, BAD),
    _r("foreign", "context also in AGENT",
       '{ context(scope: USER, query: "x", alsoScopes: [AGENT]) { tokens } }',
       "context", {"query": "x", "also_scopes": ["AGENT"]}, FORBIDDEN),
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
    _r("foreign", "another user's memory file",
       '{ memoryFile(scope: USER, path: "/memories/carol.md") { text } }',
       "memory", {"command": "view", "path": "/memories/carol.md"}, FOREIGN),
    _r("bad", "a memory path outside the tree",
       '{ memoryFile(scope: USER, path: "/etc/passwd") { text } }',
       "memory", {"command": "view", "path": "/etc/passwd"}, BAD),
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
