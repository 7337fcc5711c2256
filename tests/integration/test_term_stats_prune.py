"""A word no row holds any more leaves the scope's term statistics in the write that dropped
it (issue 46, finding 6): an overwritten or deleted note's, an edited chunk's, a deleted
document's. A word another row still holds keeps its count. Read on the real Neo4j, since
no API reads the statistics."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from neo4j import Driver

from palimpsest.cypher import terms as q
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.domain.ranking import fulltext
from palimpsest.identity import Scope, resolve_scope
from palimpsest.identity.scopes import scope_key
from palimpsest.resolvers import term_index
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.unit.principals import principal

SET = """mutation($k: String!, $v: JSON!) { memorySet(scope: USER, key: $k, value: $v) { key } }"""
DELETE = "mutation($k: String!) { memoryDelete(scope: USER, key: $k) { deleted } }"
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  summary { id } chunks { id text } } }"""
EDIT = """mutation($id: ID!, $t: String!) { updateChunk(scope: USER, id: $id, text: $t,
  revision: 1) { id } }"""
DELETE_DOC = "mutation($id: ID!) { deleteDocument(scope: USER, id: $id) { chunksDeleted } }"
STATS = """MATCH (s:TermStats {scope_key: $k}) WHERE s.term IN $terms
RETURN s.kind AS kind, s.term AS term, sum(s.df) AS df"""


def word() -> str:
    """A word nobody else writes (letters only, so it is one term)."""
    return "zq" + "".join(chr(ord("a") + int(c, 16)) for c in uuid.uuid4().hex[:12])


def term(w: str) -> str:
    [t] = fulltext.bag(w)
    return t


def held(driver: Driver, key: str, *words: str) -> dict[tuple[str, str], int]:
    """Per (kind, word), the count the statistics hold; a word absent from them is absent."""
    by_term = {term(w): w for w in words}
    rows, _, _ = driver.execute_query(STATS, k=key, terms=list(by_term))
    return {(r["kind"], by_term[r["term"]]): int(r["df"]) for r in rows}


def test_words_no_row_holds_leave_the_statistics(
    gql: Gql, token: Callable[..., str], neo4j_driver: Driver
) -> None:
    tenant, user = f"prune-{uuid.uuid4().hex[:8]}", "alice"
    who = token(tenant, user, "planner")
    key = scope_key(tenant, Scope.USER, user)
    first, second, shared = word(), word(), word()
    ok(gql(SET, who, k="a", v=f"{first} {shared}"))
    ok(gql(SET, who, k="b", v=shared))
    assert held(neo4j_driver, key, first, shared) == {
        ("memory", first): 1,
        ("memory", shared): 2,
    }

    ok(gql(SET, who, k="a", v=f"{second} {shared}"))  # an overwrite drops the first word
    assert held(neo4j_driver, key, first, second, shared) == {
        ("memory", second): 1,
        ("memory", shared): 2,
    }
    assert ok(gql(DELETE, who, k="a"))["memoryDelete"]["deleted"]
    assert held(neo4j_driver, key, first, second, shared) == {("memory", shared): 1}

    gone, kept, later = word(), word(), word()
    doc = ok(gql(IMPORT, who, m=f"# Notes\n\n{gone} and {kept}.\n"))["importDocument"]
    [chunk] = [c for c in doc["chunks"] if gone in c["text"]]
    assert set(held(neo4j_driver, key, gone, kept)) == {("chunk", gone), ("chunk", kept)}
    ok(gql(EDIT, who, id=chunk["id"], t=f"{later} and {kept}.\n"))  # an edit drops one
    assert set(held(neo4j_driver, key, gone, kept, later)) == {("chunk", kept), ("chunk", later)}
    ok(gql(DELETE_DOC, who, id=doc["summary"]["id"]))
    assert held(neo4j_driver, key, gone, kept, later) == {}
    assert held(neo4j_driver, key, shared) == {("memory", shared): 1}  # note b still has it


async def test_two_writers_taking_a_words_last_rows_at_once_drop_it(
    svc: Services, neo4j_driver: Driver
) -> None:
    """Two transactions each take one of the last two rows holding a word, each on its own
    shard, and both are uncommitted when they prune. An unlocked first read saw the other's
    row still counted (1 each), neither dropped the word, and its statistics stayed at zero
    for good. Locked, the two deadlock, the executor retries one, and it sees the other's."""
    ref = resolve_scope(principal(tenant_id=f"prune-{uuid.uuid4().hex[:8]}"), Scope.USER)
    w = word()

    def change(df: int) -> list[dict[str, Any]]:
        return [
            {"kind": "memory", "term": term(w), "df": df, "len": 0, "max_tf": 0, "max_ratio": 0.0}
        ]

    for shard in (0, 1):
        await svc.db.scoped(ref).write(q.APPLY_TERM_STATS, {"changes": change(1), "shard": shard})
    assert held(neo4j_driver, ref.scope_key, w) == {("memory", w): 2}
    taken: set[int] = set()
    both = asyncio.Event()

    def takes(shard: int) -> Callable[[ScopedTx], Awaitable[None]]:
        async def work(tx: ScopedTx) -> None:
            await tx.run(q.APPLY_TERM_STATS, {"changes": change(-1), "shard": shard})
            taken.add(shard)
            if taken == {0, 1}:
                both.set()
            await both.wait()  # the other's decrement is in, uncommitted (or, on a retry, in)
            await term_index.prune(tx, change(-1))

        return work

    await asyncio.gather(*(svc.db.scoped(ref).write_tx(takes(s)) for s in (0, 1)))

    assert held(neo4j_driver, ref.scope_key, w) == {}
