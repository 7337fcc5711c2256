"""Writes in few statements, on the real Neo4j: a key/value write is its lock-and-read and one
write statement; a harvest its spans and its counters' raise; a new fact of a new subject
runs three statements, a stored one five, in one session and one transaction (a round trip
each, and the COMMIT's). Each statement is a driver round trip (docs/notes/load.md), so a
regression to more of them fails here. The folded statements leave
a scope exactly as the statements they replace did: notes, versions, tombstones, the quota
counters and the term statistics."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import pytest
from neo4j import AsyncDriver, AsyncSession, Driver
from neo4j._async.io._bolt._base import AsyncBolt

from palimpsest.cypher import memory as memory_q
from palimpsest.cypher.driver.executor import Statement
from palimpsest.identity import Principal, Role, Scope, resolve_scope
from palimpsest.resolvers.cycle import harvesting
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import ontology
from palimpsest.schema.drafts import EntityRef, FactDraft
from tests.unit.principals import principal

# A set whose checks the scope's counters and bounds decide is one statement; a reducer
# reads the value first.
KV_SET = ["SET_MEMORY"]
KV_WRITE = ["LOCK_SCOPE_READ_ENTRY", "WRITE_MEMORY"]
# The spans' statement takes the scope's lock itself (cypher/harvest.py).
HARVEST = ["HARVEST_SPANS", "RAISE_QUOTA_COUNTERS"]
FACT_WRITE = [
    "GET_ONTOLOGY",  # the tenant's ontology, in the write's transaction (BEGIN goes with it)
    "LOCK_RESOLVE_ENTITIES",  # it proves the subject and the key unstored: two reads skipped
    "ASSERT_FACTS",  # it counts what it created: the statistics and the counters' raise
]
FACT_REWRITE = [
    "GET_ONTOLOGY",
    "LOCK_RESOLVE_ENTITIES",
    "NEAR_DUPLICATE_FACTS",
    "KEY_CONFLICTS",
    "ASSERT_FACTS",
]


def fresh() -> Principal:
    return principal(tenant_id=f"writes-{uuid.uuid4().hex[:8]}", user_id="alice")


def draft(subject: str, obj: str) -> FactDraft:
    return FactDraft(EntityRef("person", subject), "works with", EntityRef("person", obj), None)


async def test_a_key_value_set_is_one_statement_and_a_reducer_two(
    svc: Services, ran: list[str]
) -> None:
    who = fresh()
    # A new scope's first note and first version count what its bounds do not know yet
    # (resolvers/tenant/quotas.py): the one statement leaves them to the two.
    for _ in range(2):
        ran.clear()
        await memory.set_value(svc, who, Scope.USER, "first", "words", None, False, None)
        assert ran[:2] == ["SET_MEMORY", "LOCK_SCOPE_READ_ENTRY"]
    ran.clear()
    await memory.set_value(svc, who, Scope.USER, "k", "first words", None, False, None)
    assert ran == KV_SET  # a new key
    ran.clear()
    entry = await memory.set_value(svc, who, Scope.USER, "k", "second words", None, True, None)
    assert ran == KV_SET  # a stored key: its version archived in the same statement
    assert entry.value == "second words"
    assert entry.embedded
    ran.clear()
    await memory.increment(svc, who, Scope.USER, "n", 2)
    assert ran == KV_WRITE


async def test_a_harvest_is_two_statements(svc: Services, ran: list[str]) -> None:
    who = fresh()
    await harvesting.harvest(svc, who, [harvesting.SpanDraft("a first turn")], 0)
    ran.clear()
    receipt = await harvesting.harvest(svc, who, [harvesting.SpanDraft("a second turn")], 0)
    assert receipt.accepted == 1
    assert ran == HARVEST


async def test_a_new_fact_is_three_statements_and_a_stored_one_five(
    svc: Services, ran: list[str]
) -> None:
    who = fresh()
    await facts.assert_facts(svc, who, Scope.USER, [draft("Bob", "Carol")])
    ran.clear()
    [made] = await facts.assert_facts(svc, who, Scope.USER, [draft("Ada", "Grace")])
    assert made.created
    assert ran == FACT_WRITE
    ran.clear()
    [again] = await facts.assert_facts(svc, who, Scope.USER, [draft("Ada", "Grace")])
    assert not again.created
    assert ran == FACT_REWRITE  # nothing new: no statistics, no counters


@dataclass
class Wire:
    """What the driver did for the test's own task (not a background loop's): socket flushes
    (each a round trip: a send, then a wait for its answers) and sessions opened."""

    flushes: int = 0
    sessions: int = 0

    def mine(self) -> bool:
        return asyncio.current_task() is self.task

    def watch(self) -> None:
        self.task = asyncio.current_task()
        self.flushes = self.sessions = 0

    task: asyncio.Task[Any] | None = None


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> Wire:
    seen = Wire()
    send_all: Callable[[AsyncBolt], Awaitable[None]] = AsyncBolt.send_all
    session = AsyncDriver.session

    async def flushed(self: AsyncBolt) -> None:
        seen.flushes += seen.mine()
        await send_all(self)

    def opened(self: AsyncDriver, **config: Any) -> AsyncSession:
        seen.sessions += seen.mine()
        return session(self, **config)

    monkeypatch.setattr(AsyncBolt, "send_all", flushed)
    monkeypatch.setattr(AsyncDriver, "session", opened)
    return seen


async def test_a_write_is_one_session_a_round_trip_a_statement_and_the_commit(
    svc: Services, ran: list[str], wire: Wire
) -> None:
    who = fresh()
    # A write that embeds reads the embedding state when its last read is a second old
    # (resolvers/reembed.py), in a session of its own: not the write's, so not counted here.
    svc = replace(svc, embedding_state=None)
    await facts.assert_facts(svc, who, Scope.USER, [draft("Bob", "Carol")])
    await memory.set_value(svc, who, Scope.USER, "first", "words", None, False, None)
    await memory.set_value(svc, who, Scope.USER, "first", "words", None, False, None)
    for write in (
        lambda: facts.assert_facts(svc, who, Scope.USER, [draft("Ada", "Grace")]),
        lambda: memory.set_value(svc, who, Scope.USER, "k", "first words", None, False, None),
    ):
        ran.clear()
        wire.watch()
        await write()
        # BEGIN goes out with the first statement; COMMIT is a round trip of its own.
        assert (wire.sessions, wire.flushes) == (1, len(ran) + 1), ran


# A single-valued predicate: the write closes what it replaces, at the time of the lock the
# names were resolved under (never a second lock).
ONTOLOGY = "status: confirmed\n\n## person\nsingle: works with\n"
SINGLE_WRITE = [
    "GET_ONTOLOGY",
    "LOCK_RESOLVE_ENTITIES",
    "NEAR_DUPLICATE_FACTS",  # the subject is stored
    "ASSERT_FACTS",
    "CLOSURE_TIMELINES",
    "CLOSE_FACTS",
    "FACTS_BY_ID",  # the closed facts as the answer shows them
]


async def test_a_closing_write_takes_the_fact_lock_once(svc: Services, ran: list[str]) -> None:
    who = fresh()
    admin = replace(who, roles=frozenset({Role.ADMIN}))
    await ontology.set_ontology(svc, admin, ONTOLOGY)
    [first] = await facts.assert_facts(svc, who, Scope.USER, [draft("Ada", "Grace")])
    ran.clear()
    [second] = await facts.assert_facts(svc, who, Scope.USER, [draft("Ada", "Alan")])
    assert ran == SINGLE_WRITE
    [closed] = second.closed
    assert closed.fact.id == first.fact.id
    assert closed.invalid_at == second.fact.valid_at  # closed where its replacement starts
    assert first.fact.valid_at is not None  # unobserved: valid from its write's lock
    assert second.fact.valid_at is not None
    assert second.fact.valid_at >= first.fact.valid_at


SNAPSHOT = """
MATCH (s:Scope {scope_key: $k})
RETURN s {.memory_bytes, .note_versions, .quota_notes, .quota_versions, .quota_facts,
          .quota_entities} AS scope,
       COLLECT { MATCH (m:Memory {scope_key: $k})
                 RETURN [m.key, m.value, m.bytes, m.ft, m.ft_tf, m.ft_len, m.pinned]
                 ORDER BY m.key } AS notes,
       COLLECT { MATCH (v:MemoryVersion {scope_key: $k})
                 RETURN [v.key, v.value, v.deleted, v.expired_at IS NULL, v.ft]
                 ORDER BY v.key, v.created_at } AS versions,
       COLLECT { MATCH (t:TermStats {scope_key: $k})
                 WITH t.kind AS kind, t.term AS term, sum(t.df) AS df, sum(t.len) AS len,
                      max(t.max_tf) AS max_tf, max(t.max_ratio) AS max_ratio
                 RETURN [kind, term, df, len, max_tf, max_ratio] ORDER BY kind, term } AS terms,
       COUNT { MATCH (e:Entity {scope_key: $k}) } AS entities,
       COLLECT { MATCH ()-[f:FACT {scope_key: $k}]->() RETURN f.text ORDER BY f.text } AS facts
"""


async def write_a_history(svc: Services, who: Principal) -> None:
    """New keys, overwrites, a delete and a write after it (its tombstone closes), the
    reducers, and facts, new and asserted again."""
    for i, text in enumerate(["alpha beta", "beta gamma", "gamma gamma delta"]):
        await memory.set_value(svc, who, Scope.USER, f"k{i % 2}", text, None, False, None)
    await memory.delete(svc, who, Scope.USER, "k1")
    await memory.set_value(svc, who, Scope.USER, "k1", "back again", None, False, None)
    await memory.increment(svc, who, Scope.USER, "n", 3)
    await memory.increment(svc, who, Scope.USER, "n", 4)
    await memory.merge(svc, who, Scope.USER, "m", {"a": 1})
    await facts.assert_facts(svc, who, Scope.USER, [draft("Ada", "Grace"), draft("Ada", "Alan")])
    await facts.assert_facts(svc, who, Scope.USER, [draft("Ada", "Grace"), draft("Bob", "Ada")])


# What ``write_a_history`` leaves in its scope. Recorded from the statements the folded ones
# replace (``ARCHIVE_CURRENT``, ``UPSERT_MEMORY``, ``APPLY_TERM_STATS``, the quota admission,
# ``LOCK_SCOPE_FACTS`` then ``RESOLVE_ENTITIES``: the unfolded writes, a bench switch until
# issue 44 took it out of the product), which left exactly this, as the folded writes did.
UNFOLDED_HISTORY = {
    "entities": 4,
    "facts": ["Ada works with Alan", "Ada works with Grace", "Bob works with Ada"],
    "notes": [
        ["k0", '"gamma gamma delta"', 21, "delta gamma", [1, 2], 3, None],
        ["k1", '"back again"', 14, "again back", [1, 1], 2, None],
        ["m", '{"a":1}', 8, "1", [1], 1, None],
        ["n", "7", 2, "7", [1], 1, None],
    ],
    "scope": {
        "memory_bytes": 45,
        "note_versions": 4,
        "quota_entities": 4,
        "quota_facts": 3,
        "quota_notes": 5,
        "quota_versions": 4,
    },
    "terms": [
        ["fact", "", 3, 9, 0, 0.0],
        ["fact", "ada", 3, 0, 1, 0.3333333333333333],
        ["fact", "alan", 1, 0, 1, 0.3333333333333333],
        ["fact", "bob", 1, 0, 1, 0.3333333333333333],
        ["fact", "grace", 1, 0, 1, 0.3333333333333333],
        ["fact", "work", 3, 0, 1, 0.3333333333333333],
        ["memory", "", 4, 7, 0, 0.0],
        ["memory", "1", 1, 0, 1, 1.0],
        ["memory", "7", 1, 0, 1, 1.0],
        ["memory", "again", 1, 0, 1, 0.5],
        ["memory", "back", 1, 0, 1, 0.5],
        ["memory", "delta", 1, 0, 1, 0.3333333333333333],
        ["memory", "gamma", 1, 0, 2, 0.6666666666666666],
    ],
    "versions": [
        ["k0", '"alpha beta"', False, False, "alpha beta"],
        ["k1", '"beta gamma"', False, False, "beta gamma"],
        ["k1", None, True, False, None],
        ["n", "3", False, False, "3"],
    ],
}


async def test_folded_writes_leave_the_scope_as_the_statements_they_replace(
    svc: Services, neo4j_driver: Driver
) -> None:
    who = fresh()
    await write_a_history(svc, who)
    key = resolve_scope(who, Scope.USER).scope_key
    [row], _, _ = neo4j_driver.execute_query(SNAPSHOT, k=key)
    assert row.data() == UNFOLDED_HISTORY


# Sets that take the one statement once the scope's counters are known: new keys, overwrites
# whose terms, peaks and speaker change, a pin kept and dropped, a key set after its delete,
# a note with a separate embedded text and one with a time to live.
SETS: list[tuple[str, object, dict[str, Any]]] = [
    ("a", "first words", {}),
    ("a", "first words again", {}),
    ("b", "Ada: we met on Monday, Monday again", {"pinned": True}),
    ("b", "Ada: monday", {}),
    ("b", "Grace: Monday, Tuesday and Monday", {"pinned": False}),
    ("a", "words", {}),
    ("c", {"n": 1, "text": "nested value"}, {"embed": True, "embed_text": "an embedded text"}),
    ("c", {"n": 2}, {"ttl_seconds": 3600}),
    ("a", "", {}),
    ("a", "words back", {}),
]


async def set_history(svc: Services, who: Principal) -> None:
    await memory.set_value(svc, who, Scope.USER, "seed", "seed", None, False, None)
    await memory.set_value(svc, who, Scope.USER, "seed", "seed words", None, False, None)
    for i, (key, value, options) in enumerate(SETS):
        if i == 6:
            await memory.delete(svc, who, Scope.USER, "a")
        await memory.set_value(
            svc,
            who,
            Scope.USER,
            key,
            value,
            options.get("ttl_seconds"),
            bool(options.get("embed")),
            options.get("embed_text"),
            pinned=options.get("pinned"),
        )


async def test_one_statement_sets_leave_the_scope_as_the_two_statements_do(
    svc: Services, neo4j_driver: Driver, ran: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same history of sets in two scopes, the second with the one statement refused
    every time (its checks failed): notes, versions, tombstones, counters and the summed
    term statistics come out the same."""
    one, two = fresh(), fresh()
    await set_history(svc, one)
    assert ran.count("SET_MEMORY") > ran.count("LOCK_SCOPE_READ_ENTRY") + 4  # mostly one
    monkeypatch.setattr(memory_q, "SET_MEMORY", NEVER_SET)
    await set_history(svc, two)
    snaps = []
    for who in (one, two):
        key = resolve_scope(who, Scope.USER).scope_key
        [row], _, _ = neo4j_driver.execute_query(SNAPSHOT, k=key)
        snaps.append(row.data())
    assert snaps[0] == snaps[1]
    assert snaps[0]["terms"]  # the statistics were written at all


# ``SET_MEMORY`` as if its checks had failed: no row.
NEVER_SET = Statement("SET_MEMORY", "RETURN $scope_key AS never LIMIT 0")


async def test_a_key_named_twice_in_one_batch_counts_the_text_stored(
    svc: Services, neo4j_driver: Driver
) -> None:
    # The statement creates the fact from the first row of its key; the term statistics
    # (kept by the statement or by the resolver) must count that row's text, not the last's.
    who = fresh()
    key = resolve_scope(who, Scope.USER).scope_key
    ada, grace = EntityRef("person", "Ada"), EntityRef("person", "Grace")
    twice = [
        FactDraft(ada, "works with", grace, None, text="Ada pairs with Grace"),
        FactDraft(ada, "works with", grace, None, text="Ada codes beside Grace"),
    ]
    made = await facts.assert_facts(svc, who, Scope.USER, twice)
    assert [m.fact.text for m in made] == ["Ada pairs with Grace"] * 2
    [row], _, _ = neo4j_driver.execute_query(SNAPSHOT, k=key)
    terms = {term: df for kind, term, df, *_ in row["terms"] if kind == "fact"}
    assert terms == {"": 1, "ada": 1, "grace": 1, "pair": 1}
