"""A chunk's document title and headings as its full-text context, on the real Neo4j (issue
28): a question naming only a page's subject finds the page's paragraphs, which never name
it, with the lever and not without; a new title or an edited heading re-indexes the chunks
whose representation quotes it, and another scope's pages never answer."""

from __future__ import annotations

import uuid
from dataclasses import replace

from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.documents import catalog as documents
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.documents import revisions as document_revisions
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall.planner import Mode, recall
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal

DOCUMENTS = frozenset({Source.DOCUMENTS})


PAGE = "Elowen Marchbank"
BODY = [
    "She joined the harbour rowing club in 2013.",
    "Her coach praised the strength of her stroke.",
]
OTHER_PAGE = "Tobias Fenwright"
OTHER_BODY = ["He joined the mountain walking club in 2013."]


def fresh() -> Principal:
    return principal(tenant_id=f"title-{uuid.uuid4().hex[:8]}")


def without_context(svc: Services) -> Services:
    return replace(svc, settings=svc.settings.replace(fulltext_context=False))


async def load(
    svc: Services, who: Principal, title: str, body: list[str], path: str | None = None
) -> None:
    await importer.import_document(svc, who, Scope.USER, "\n\n".join(body), title, path, None)


async def ask(svc: Services, who: Principal, question: str, mode: Mode) -> list[str]:
    # The request as the doors build it (the server's ranking settings), in the given mode.
    asked = asks.request_of(svc, asks.Ask(question, top_k=5), DOCUMENTS)
    req = replace(asked, mode=mode)
    return [h.text.strip() for h in (await recall(svc, who, [Scope.USER], req)).hits]


async def test_a_question_naming_only_the_title_finds_the_page_body(svc: Services) -> None:
    on, off = fresh(), fresh()
    for who, services in ((on, svc), (off, without_context(svc))):
        await load(services, who, PAGE, BODY)
        await load(services, who, OTHER_PAGE, OTHER_BODY)
    # Only the title names her: with the lever both paragraphs of her page answer, nothing
    # else; without it no chunk holds her name at all.
    assert set(await ask(svc, on, PAGE, Mode.FULLTEXT)) == set(BODY)
    assert await ask(svc, off, PAGE, Mode.FULLTEXT) == []
    # A question about her: her page's paragraph outranks the other page's, which shares
    # every other word of the question ("club", "joined", "2013").
    question = f"Which club did {PAGE} join in 2013?"
    assert (await ask(svc, on, question, Mode.FULLTEXT))[0] == BODY[0]
    assert (await ask(svc, off, question, Mode.FULLTEXT))[0] == OTHER_BODY[0]
    assert (await ask(svc, on, question, Mode.HYBRID))[0] == BODY[0]
    # Another user of the same tenant asking by her name sees nothing of either scope.
    stranger = replace(on, user_id=f"{on.user_id}-other")
    assert await ask(svc, stranger, PAGE, Mode.FULLTEXT) == []


async def test_a_new_title_reindexes_every_chunk_of_the_document(svc: Services) -> None:
    who = fresh()
    path = "/people/rower"
    doc = await importer.import_document(svc, who, Scope.USER, "\n\n".join(BODY), PAGE, path, None)
    await load(svc, who, "Elowen Thistlewood", BODY, path)  # a revision, the body unchanged
    assert set(await ask(svc, who, "Thistlewood", Mode.FULLTEXT)) == set(BODY)
    assert await ask(svc, who, "Marchbank", Mode.FULLTEXT) == []
    # Restoring the first revision brings the first title back into the representations.
    await document_revisions.restore(svc, who, Scope.USER, doc.summary.id, 1)
    assert set(await ask(svc, who, "Marchbank", Mode.FULLTEXT)) == set(BODY)
    assert await ask(svc, who, "Thistlewood", Mode.FULLTEXT) == []


async def test_an_edited_heading_reindexes_the_chunks_below_it(svc: Services) -> None:
    who = fresh()
    text = (
        "# Harbour notes\n\n## Boathouse\n\nThe roof was mended in May.\n\n"
        "The doors were painted green.\n\n## Cafés\n\nFresh bread daily.\n"
    )
    doc = await importer.import_document(svc, who, Scope.USER, text, None, None, None)
    plain = fresh()
    await importer.import_document(without_context(svc), plain, Scope.USER, text, None, None, None)
    # The second paragraph under "Boathouse" follows a paragraph, not the heading: only the
    # heading context makes it answer "boathouse".
    doors = "The doors were painted green."
    assert doors in await ask(svc, who, "boathouse", Mode.FULLTEXT)
    assert doors not in await ask(svc, plain, "boathouse", Mode.FULLTEXT)
    [heading] = [c for c in doc.chunks if c.text.startswith("## Boathouse")]
    await documents.update_chunk(svc, who, Scope.USER, heading.id, "## Slipway\n", heading.revision)
    assert doors in await ask(svc, who, "slipway", Mode.FULLTEXT)
    assert doors not in await ask(svc, who, "boathouse", Mode.FULLTEXT)
    # The section that follows never was under it.
    assert "Fresh bread daily." not in await ask(svc, who, "slipway", Mode.FULLTEXT)
