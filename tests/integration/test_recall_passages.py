"""Turns longer than the embedding model's window, on the real Neo4j (docs/reference/recall.md,
Passages). A 6,000-character turn about a kitchen renovation states, in its last paragraph
only, the names of a sister's alpacas; short turns about other farm animals sit beside it.
The vector leg alone finds the long turn first for a question about the alpacas, as one hit
with its text whole, and ``explain`` names the passage that matched; with passages off (the
head vector alone) it does not. Edits replace a chunk's passages, deletion and erasure remove
them (an import of the export makes them again), and a 200,000-character message is stored
whole with a bounded number of passages."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.domain.documents import conversation
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.identity.acting import act_for_user
from palimpsest.jobs.portability import export_to_file, import_from_file
from palimpsest.resolvers import documents
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall.hits import Hit
from palimpsest.resolvers.recall.planner import Mode, recall
from palimpsest.resolvers.services import Services
from tests.integration import people
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import HARVEST, drain
from tests.integration.test_erasure import ERASE_USER
from tests.unit.principals import principal

_RENOVATION = [
    "We finally started on the kitchen last month, and it has taken over every evening.",
    "The old cabinets came out first; the carpenter found the wall behind them was damp.",
    "So the plaster had to dry for two weeks before anything new could be hung there.",
    "Meanwhile we argued about tiles: matte grey, or the green glazed ones from the market.",
    "The green ones won, although they cost almost twice as much per square metre.",
    "The electrician moved three sockets and added a circuit for the new induction hob.",
    "Our budget spreadsheet now has a column just for things nobody thought to ask about.",
    "The worktop is oak, oiled four times, and it still marks if a wet mug sits on it.",
    "We cook on a camping stove in the living room and wash dishes in the bathroom sink.",
    "The plumber comes on Thursday to connect the sink and, we hope, the dishwasher too.",
]
FACT = (
    "One more thing before I forget: my sister Ingrid keeps three alpacas on her farm in "
    "Vermont, and she named them Pepper, Mole and Saffron."
)
QUESTION = "What are the names of Ingrid's alpacas?"
OTHERS = [
    "My neighbour keeps two goats that escape into our garden every spring.",
    "The farm down the road sells fresh eggs from its chickens on Saturdays.",
    "Ingrid visited last weekend and we walked along the river for hours.",
    "A friend of mine raises sheep and spins their wool into yarn.",
    "We saw llamas at the county fair; the children wanted to take one home.",
    "Our cat caught a mouse in the shed and left it on the doorstep.",
]
PASSAGES = """
MATCH (p:Passage {scope_key: $key})
RETURN count(p) AS n, collect(DISTINCT p.chunk_id) AS chunks
"""


def long_turn() -> str:
    """About 6,000 characters: seven paragraphs of renovation, then the fact."""
    paragraphs = []
    for i in range(7):
        turned = _RENOVATION[i:] + _RENOVATION[:i]
        paragraphs.append(" ".join(turned))
    text = "\n\n".join(paragraphs) + "\n\n" + FACT
    assert 5800 <= len(text) <= 6400, len(text)
    return text


def passages_of(driver: Driver, key: str) -> tuple[int, list[str]]:
    records, _, _ = driver.execute_query(PASSAGES, key=key)
    return int(records[0]["n"]), list(records[0]["chunks"])


async def ask_vector(svc: Services, who: Principal, question: str = QUESTION) -> list[Hit]:
    asked = asks.request_of(svc, asks.Ask(question, top_k=5), frozenset({Source.DOCUMENTS}))
    return (await recall(svc, who, [Scope.USER], replace(asked, mode=Mode.VECTOR))).hits


MOST = 64  # passages per chunk, switched on for these tests (off by default)


@pytest.fixture
def tenant() -> str:
    return f"passages-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def on(svc: Services) -> Services:
    """The services with passages on: what writes in-process (imports, consolidation)."""
    return replace(svc, settings=svc.settings.replace(passage_max=MOST))


def harvest(gql: Gql, who: str, texts: list[str]) -> list[str]:
    """Spans banked for consolidation; their ids (a turn's id is its span's)."""
    spans = [{"text": t, "speaker": "Alice", "sourceId": f"m{i}"} for i, t in enumerate(texts)]
    ids: list[str] = ok(gql(HARVEST, who, spans=spans, gen=1))["harvest"]["spanIds"]
    assert len(ids) == len(texts)
    return ids


def load(gql: Gql, token: Callable[..., str], tenant: str, user: str) -> list[str]:
    """The long turn and the short ones, harvested."""
    who = token(tenant, user, "planner", memory_scopes=[Scope.USER])
    return harvest(gql, who, [long_turn(), *OTHERS])


async def test_a_fact_in_the_last_paragraph_of_a_long_turn_is_found_by_the_vector_leg_alone(
    gql: Gql,
    token: Callable[..., str],
    svc: Services,
    on: Services,
    tenant: str,
    neo4j_driver: Driver,
) -> None:
    [long_id, *_] = load(gql, token, tenant, "ana")
    await drain(on, tenant, "ana")
    who = act_for_user(tenant, "ana")
    count, chunks = passages_of(neo4j_driver, resolve_scope(who, Scope.USER).scope_key)
    assert chunks == [long_id]
    assert count >= 6

    hits = await ask_vector(on, who)
    assert [h.id for h in hits].count(long_id) == 1  # one chunk, one hit
    best = hits[0]
    assert best.id == long_id
    assert best.text == conversation.turn_text("Alice", long_turn())[0]  # whole, exact
    assert best.fulltext_rank is None  # the vector leg alone
    assert best.explain is not None
    [leg] = [p for p in best.explain.legs if p.leg == "vector"]
    assert leg.passage is not None
    assert leg.passage.seq >= 1
    assert best.text.index("Pepper") in range(leg.passage.start, leg.passage.end)
    assert leg.value == best.cosine

    # The same turns without passages (the default): the long turn's own vector reads only
    # its head.
    plain = svc
    assert plain.settings.recall.passage_max == 0
    [head_only, *_] = load(gql, token, tenant, "bo")
    await drain(plain, tenant, "bo")
    them = act_for_user(tenant, "bo")
    assert passages_of(neo4j_driver, resolve_scope(them, Scope.USER).scope_key)[0] == 0
    without = await ask_vector(plain, them)
    assert without[0].id != head_only
    by_id = {h.id: h for h in without}
    if head_only in by_id:
        head_cosine, best_cosine = by_id[head_only].cosine, best.cosine
        assert head_cosine is not None
        assert best_cosine is not None
        assert head_cosine < best_cosine


async def test_an_edit_replaces_the_passages_and_a_deletion_removes_them(
    on: Services, tenant: str, neo4j_driver: Driver
) -> None:
    svc = on
    who = principal(tenant_id=tenant)
    key = resolve_scope(who, Scope.USER).scope_key
    # One paragraph (single line breaks): one chunk of about 6,000 characters.
    text = long_turn().replace("\n\n", "\n")
    doc = await documents.import_document(svc, who, Scope.USER, text, "kitchen", None, None)
    [chunk] = [c for c in doc.chunks if c.text.strip()]
    assert chunk.text == text
    count, chunks = passages_of(neo4j_driver, key)
    assert chunks == [chunk.id]
    assert count >= 6
    assert (await ask_vector(svc, who))[0].id == chunk.id

    # An edit without the fact: the old text's passages go with it.
    edited = text.replace(FACT, "Nothing else happened this week.")
    await documents.update_chunk(svc, who, Scope.USER, chunk.id, edited, chunk.revision)
    count_after, _ = passages_of(neo4j_driver, key)
    assert 0 < count_after <= count
    found = await ask_vector(svc, who)
    vector = [p for h in found if h.explain for p in h.explain.legs if p.leg == "vector"]
    assert not any(p.passage and p.passage.end > len(edited) for p in vector)

    # A short text has no passages; deleting the document removes any it had.
    await documents.update_chunk(svc, who, Scope.USER, chunk.id, "Short now.", chunk.revision + 1)
    assert passages_of(neo4j_driver, key)[0] == 0
    await documents.update_chunk(svc, who, Scope.USER, chunk.id, text, chunk.revision + 2)
    assert passages_of(neo4j_driver, key)[0] == count
    await documents.delete_document(svc, who, Scope.USER, doc.summary.id)
    assert passages_of(neo4j_driver, key)[0] == 0


async def test_a_restore_writes_the_restored_texts_passages(
    on: Services, tenant: str, neo4j_driver: Driver
) -> None:
    svc = on
    who = principal(tenant_id=tenant)
    key = resolve_scope(who, Scope.USER).scope_key
    text = long_turn().replace("\n\n", "\n")
    doc = await documents.import_document(svc, who, Scope.USER, text, "kitchen", None, None)
    [chunk] = [c for c in doc.chunks if c.text.strip()]
    count = passages_of(neo4j_driver, key)[0]
    await documents.update_chunk(svc, who, Scope.USER, chunk.id, "Short now.", chunk.revision)
    assert passages_of(neo4j_driver, key)[0] == 0

    # Revision 1 back: its long text gets its passages again, and the fact in its last
    # paragraph is found by the vector leg alone.
    await documents.restore(svc, who, Scope.USER, doc.summary.id, 1)
    assert passages_of(neo4j_driver, key) == (count, [chunk.id])
    assert (await ask_vector(svc, who))[0].id == chunk.id


async def test_a_200000_character_message_is_stored_whole_with_bounded_passages(
    gql: Gql,
    token: Callable[..., str],
    on: Services,
    tenant: str,
    neo4j_driver: Driver,
) -> None:
    svc = on
    words = [f"word{i % 997}" for i in range(40_000)]
    body = " ".join(words)
    huge = (body + " " * 200_000)[: 200_000 - len(FACT) - 1] + " " + FACT
    assert len(huge) == 200_000
    who_token = token(tenant, "cy", "planner", memory_scopes=[Scope.USER])
    [span] = harvest(gql, who_token, [huge])
    await drain(svc, tenant, "cy")
    who = act_for_user(tenant, "cy")
    key = resolve_scope(who, Scope.USER).scope_key
    count, chunks = passages_of(neo4j_driver, key)
    assert chunks == [span]
    assert count == svc.settings.recall.passage_max

    query = "query($q: String!) { search(scope: USER, query: $q, topK: 3) { hits { id text } } }"
    found: list[dict[str, Any]] = ok(gql(query, who_token, q="Pepper Mole Saffron alpacas"))[
        "search"
    ]["hits"]
    assert [h["id"] for h in found] == [span]
    assert found[0]["text"] == conversation.turn_text("Alice", huge)[0]


async def test_erasure_removes_the_passages_and_an_import_makes_them_again(
    gql: Gql,
    token: Callable[..., str],
    settings: Settings,
    on: Services,
    tmp_path: Path,
    neo4j_driver: Driver,
) -> None:
    tenant, admin = people.new_org(gql, token, "passages")
    who = act_for_user(tenant, "dee")
    text = long_turn().replace("\n\n", "\n")
    await documents.import_document(on, who, Scope.USER, text, "kitchen", None, None)
    key = resolve_scope(who, Scope.USER).scope_key
    count, _ = passages_of(neo4j_driver, key)
    assert count >= 6

    out = tmp_path / "dee.jsonl"
    await export_to_file(settings, tenant, "dee", out)
    assert '"Passage"' not in out.read_text()  # derived from the text: not exported
    ok(gql(ERASE_USER, admin, u="dee"))
    assert passages_of(neo4j_driver, key)[0] == 0

    await import_from_file(on.settings, out)
    assert passages_of(neo4j_driver, key)[0] == count
