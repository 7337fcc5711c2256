"""Concurrent writes of one kind into one user's scope (docs/notes/load.md, "Concurrent
writers of one scope"): every writer takes the scope node's lock before anything else of the
scope, so they queue behind one another and never deadlock on the ``:Scope`` node, which the
driver would retry after a back-off of a second or more. The statement log counts one run of
each write's statement per call: a deadlock's retry would have run it again."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable

import pytest

from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.cycle import harvesting
from palimpsest.resolvers.documents import importing as documents
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.notes import keyvalue as memory
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft
from tests.integration.cycle import config, drain
from tests.unit.principals import principal

CALLS = 8

Write = Callable[[Services, Principal, int], Awaitable[object]]


async def _note(svc: Services, who: Principal, i: int) -> object:
    return await memory.set_value(svc, who, Scope.USER, f"k{i}", {"n": i}, None, False, None)


async def _fact(svc: Services, who: Principal, i: int) -> object:
    # One subject shared by every call: its entity is resolved by all of them at once.
    draft = FactDraft(EntityRef("Person", "Alice"), "knows", EntityRef("Person", f"P{i}"), None)
    return await facts.assert_facts(svc, who, Scope.USER, [draft])


async def _document(svc: Services, who: Principal, i: int) -> object:
    text = f"# Doc {i}\n\nThe {i}th page of the notebook.\n"
    return await documents.import_document(svc, who, Scope.USER, text, None, None, None)


# Each writer, and its write statement (the one a retry would run again).
WRITERS: dict[str, tuple[Write, str]] = {
    "note": (_note, "SET_MEMORY"),  # the first statement of a set, whichever path it takes
    "fact": (_fact, "ASSERT_FACTS"),
    "document": (_document, "CREATE_DOCUMENT"),
}


@pytest.mark.parametrize("kind", sorted(WRITERS))
@pytest.mark.parametrize("existing", [False, True], ids=["new-scope", "existing-scope"])
async def test_concurrent_writes_into_one_scope_never_retry(
    svc: Services, ran: list[str], kind: str, existing: bool
) -> None:
    write, statement = WRITERS[kind]
    who = principal(tenant_id=f"t-{uuid.uuid4().hex[:10]}", user_id="alice")
    if existing:  # the scope's node and its counters exist already: every call finds them
        await write(svc, who, CALLS)
    before = ran.count(statement)
    done = await asyncio.gather(*(write(svc, who, i) for i in range(CALLS)))
    assert len(done) == CALLS
    assert ran.count(statement) - before == CALLS


async def _delete(svc: Services, who: Principal, i: int) -> object:
    assert await memory.delete(svc, who, Scope.USER, f"k{i}")
    return None


async def _revise(svc: Services, who: Principal, i: int) -> object:
    text = f"# Page {i}\n\nThe {i}th page, revised.\n"
    return await documents.import_document(svc, who, Scope.USER, text, None, f"/p{i}.md", None)


async def _page(svc: Services, who: Principal, i: int) -> object:
    text = f"# Page {i}\n\nThe {i}th page.\n"
    return await documents.import_document(svc, who, Scope.USER, text, None, f"/p{i}.md", None)


# Writers of what the scope holds already (made one at a time first), and their statement.
CHANGERS: dict[str, tuple[Write, Write, str]] = {
    "note-delete": (_note, _delete, "DELETE_MEMORY"),
    "document-revision": (_page, _revise, "BUMP_DOCUMENT"),
}


@pytest.mark.parametrize("kind", sorted(CHANGERS))
async def test_concurrent_changes_in_one_scope_never_retry(
    svc: Services, ran: list[str], kind: str
) -> None:
    make, change, statement = CHANGERS[kind]
    who = principal(tenant_id=f"t-{uuid.uuid4().hex[:10]}", user_id="alice")
    for i in range(CALLS):
        await make(svc, who, i)
    before = ran.count(statement)
    await asyncio.gather(*(change(svc, who, i) for i in range(CALLS)))
    assert ran.count(statement) - before == CALLS


async def _harvest(svc: Services, who: Principal, i: int) -> object:
    return await harvesting.harvest(svc, who, [harvesting.SpanDraft(f"turn {i}")], 0)


@pytest.mark.parametrize("existing", [False, True], ids=["new-scope", "existing-scope"])
async def test_concurrent_writes_of_every_kind_into_one_scope_never_retry(
    svc: Services, ran: list[str], existing: bool
) -> None:
    """A harvest, a note, a fact and a document at once, twice over: the writers of different
    kinds queue on the same lock as those of one kind."""
    kinds: list[tuple[Write, str]] = [*WRITERS.values(), (_harvest, "HARVEST_SPANS")]
    who = principal(tenant_id=f"t-{uuid.uuid4().hex[:10]}", user_id="alice")
    if existing:
        for write, _ in kinds:
            await write(svc, who, CALLS)
    before = {statement: ran.count(statement) for _, statement in kinds}
    await asyncio.gather(*(write(svc, who, i) for i in range(2) for write, _ in kinds))
    assert {s: ran.count(s) - n for s, n in before.items()} == dict.fromkeys(before, 2)


async def test_consolidation_beside_a_scopes_writers_never_retries(
    svc: Services, ran: list[str]
) -> None:
    """The consolidator writes a user's turns, mentions and facts (its counters raised after
    its rows) while harvests and note writes of the user go on: none of them is retried."""
    who = principal(tenant_id=f"t-{uuid.uuid4().hex[:10]}", user_id="alice")
    for i in range(CALLS):  # what the consolidator leases, a few spans a batch
        fact = FactDraft(EntityRef("Person", "Alice"), "knows", EntityRef("Person", f"Q{i}"), None)
        turn = harvesting.SpanDraft(f"Alice met Q{i} in Paris.", "Alice", facts=[fact])
        await harvesting.harvest(svc, who, [turn], 0)
    before = {s: ran.count(s) for s in ("HARVEST_SPANS", "SET_MEMORY")}
    settled, _ = await asyncio.gather(
        drain(svc, who.tenant_id, "alice", config("locks", batch_size=3)),
        asyncio.gather(
            *(_harvest(svc, who, i) for i in range(CALLS)),
            *(_note(svc, who, i) for i in range(CALLS)),
        ),
    )
    assert settled.consolidated >= CALLS
    assert {s: ran.count(s) - n for s, n in before.items()} == dict.fromkeys(before, CALLS)
    # One run of the batch's write (its first statement locks the leased spans) per batch
    # leased: a retry would have run it again.
    assert ran.count("LOCK_SPANS") == ran.count("LEASE_SPANS") >= 3
