"""The full-text neighbourhood for short chunks only (``fulltext_neighbours_max_terms``, here
64 terms; off by default), on the real Neo4j: a chat line quotes the short lines around it,
but not a long message beside it, and a long message quotes nothing but itself; an edit that
makes a chunk long takes its words out of its neighbours' representations."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.documents import catalog
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall.planner import Mode, recall
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal

# Over 64 terms once stop words are out.
LONG = " ".join(f"step{i} configures gateway{i}" for i in range(30))


@pytest.fixture
def short(svc: Services) -> Services:
    """The services with the neighbourhood for chunks of at most 64 terms."""
    return replace(svc, settings=svc.settings.replace(fulltext_neighbours_max_terms=64))


async def found(svc: Services, who: Principal, query: str) -> set[str]:
    """The chunks the full-text leg ranks for ``query``."""
    asked = asks.request_of(svc, asks.Ask(query, top_k=10), frozenset({Source.DOCUMENTS}))
    hits = (await recall(svc, who, [Scope.USER], replace(asked, mode=Mode.FULLTEXT))).hits
    return {h.id for h in hits}


async def test_a_short_turn_does_not_quote_a_long_message_beside_it(short: Services) -> None:
    who = principal(tenant_id=f"nbh-{uuid.uuid4().hex[:8]}")
    turns = [
        "user: my quokkaberry jam burned again",
        f"assistant: zanzibarite answer. {LONG}",
        "user: thanks, the marmaladite worked",
        "assistant: glad the jam is fixed",
    ]
    doc = await importer.import_document(
        short, who, Scope.USER, "\n\n".join(turns), "t", None, None
    )
    ids = [c.id for c in doc.chunks]
    # The long answer's word: only the answer holds it, not the short turns beside it.
    assert await found(short, who, "zanzibarite") == {ids[1]}
    # The long answer holds none of its short neighbours' words.
    assert await found(short, who, "quokkaberry") == {ids[0]}
    # Two short lines still quote each other (chat lines keep their neighbourhood).
    assert await found(short, who, "marmaladite") == {ids[2], ids[3]}


async def test_an_edit_that_makes_a_chunk_long_takes_it_out_of_its_neighbours(
    short: Services,
) -> None:
    who = principal(tenant_id=f"nbh-e-{uuid.uuid4().hex[:8]}")
    body = "First plain line.\n\nSecond zanzibarite line.\n\nThird line.\n"
    doc = await importer.import_document(short, who, Scope.USER, body, "t", None, None)
    chunks = list(doc.chunks)
    assert await found(short, who, "zanzibarite") == {c.id for c in chunks}
    middle = chunks[1]
    text = f"Second zanzibarite line. {LONG}"
    await catalog.update_chunk(short, who, Scope.USER, middle.id, text, middle.revision)
    assert await found(short, who, "zanzibarite") == {middle.id}
    assert await found(short, who, "plain") == {chunks[0].id}


async def test_without_the_limit_every_chunk_quotes_its_neighbours(svc: Services) -> None:
    who = principal(tenant_id=f"nbh-o-{uuid.uuid4().hex[:8]}")
    turns = ["user: my quokkaberry jam burned again", f"assistant: zanzibarite answer. {LONG}"]
    doc = await importer.import_document(svc, who, Scope.USER, "\n\n".join(turns), "t", None, None)
    assert svc.settings.recall.fulltext_neighbours_max_terms == 0  # the default: no limit
    assert await found(svc, who, "zanzibarite") == {c.id for c in doc.chunks}
