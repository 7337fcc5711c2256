"""A chunk's title-and-headings context in its full-text representation (issue 28): hand-made
documents, their parsed chunk trees, and the representations their chunks are stored with."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.documents import markdown
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking.fulltext import Stored
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers import term_index
from tests.unit.principals import principal
from tests.unit.recording import services

GUIDE = """# Harbour guide

Boats leave at dawn.

## Ferries

The ferry sails hourly.

- Tickets cost two crowns.

### Night ferry

It stops at midnight.

## Cafés

Fresh bread daily.
"""


def terms(*texts: str) -> Counter[str]:
    return Counter(dict.fromkeys(fulltext.analyze(" ".join(texts)), 1))


def times(bag: Counter[str], n: int) -> Counter[str]:
    return Counter({t: c * n for t, c in bag.items()})


def contexts(text: str, title: str | None) -> dict[str, Counter[str]]:
    parsed = markdown.parse(text)
    tree = [(c.type.value, c.text, c.parent) for c in parsed.chunks]
    found = term_index.heading_contexts(title, tree)
    return {c.text.strip(): ctx for c, ctx in zip(parsed.chunks, found, strict=True)}


def test_a_chunk_carries_its_title_and_every_heading_above_it() -> None:
    found = contexts(GUIDE, "Visiting Portwick")
    title = "Visiting Portwick"
    assert found["# Harbour guide"] == terms(title)  # a heading's own text is not its context
    assert found["Boats leave at dawn."] == terms(title, "Harbour guide")
    assert found["## Ferries"] == terms(title, "Harbour guide")
    assert found["The ferry sails hourly."] == terms(title, "Harbour guide", "Ferries")
    # A list item's chunk sits under its section's heading like a paragraph.
    assert found["- Tickets cost two crowns."] == terms(title, "Harbour guide", "Ferries")
    assert found["It stops at midnight."] == terms(title, "Harbour guide", "Ferries", "Night ferry")
    # A section closes at a heading of its level: Cafés is not under Ferries.
    assert found["Fresh bread daily."] == terms(title, "Harbour guide", "Cafés")


def test_each_term_of_the_context_counts_once() -> None:
    # The title repeats the first heading (SciFact's abstracts, imported with their title as
    # a level-1 heading) and a term recurs: the context still holds each term once.
    found = contexts("# Ferry ferry times\n\nThe ferry sails hourly.\n", "Ferry ferry times")
    [ferri] = set(fulltext.analyze("ferry"))
    assert found["The ferry sails hourly."] == Counter({ferri: 1, "time": 1})


def test_a_document_without_title_or_headings_has_no_context() -> None:
    found = contexts("Mira: we hiked the ridge\n\nTomas: it was windy\n", None)
    assert all(not ctx for ctx in found.values())


def test_the_representation_adds_the_context_once_beside_the_neighbourhood() -> None:
    texts = ["Boats leave at dawn.", "The ferry sails hourly."]
    ctx = terms("Visiting Portwick")
    [first, second] = term_index.chunk_fields(texts, True, None, [ctx, ctx])
    own = [fulltext.bag(t) for t in texts]
    assert fulltext.stored_bag(first["ft"], first["ft_tf"]) == times(own[0], 2) + own[1] + ctx
    assert fulltext.stored_bag(second["ft"], second["ft_tf"]) == times(own[1], 3) + own[0] + ctx
    # Without the neighbourhood: the chunk's own text and its context.
    [alone, _] = term_index.chunk_fields(texts, False, None, [ctx, ctx])
    assert fulltext.stored_bag(alone["ft"], alone["ft_tf"]) == own[0] + ctx
    # The lever off (no contexts): exactly the representation of before.
    [plain, _] = term_index.chunk_fields(texts, True)
    assert fulltext.stored_bag(plain["ft"], plain["ft_tf"]) == times(own[0], 2) + own[1]


def stored(rep: Counter[str]) -> dict[str, Any]:
    s = Stored.of(rep)
    return {"ft": s.ft, "ft_tf": s.tf}


async def test_an_edited_heading_reindexes_the_chunks_below_it(tmp_path: Path) -> None:
    # The section heading "Ferries" became "Boats": the paragraph under it (read back as a
    # chunk below the edited one) is re-indexed with the new heading in its context.
    body = "It sails hourly."
    own = fulltext.bag(body)
    before = times(own, 3) + fulltext.bag("## Ferries") + terms("Portwick", "Ferries")
    asked: list[dict[str, Any]] = []

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "READ_CHUNK_CONTEXT":
            asked.append({k: params[k] for k in ("ids", "below")})
            return [
                {"id": "h", "text": "## Boats", "indexed": True, "speaker": None,
                 **stored(times(fulltext.bag("## Ferries"), 2) + own + terms("Portwick")),
                 "prev": None, "next": body, "title": "Portwick", "headings": []},
                {"id": "p", "text": body, "indexed": True, "speaker": None, **stored(before),
                 "prev": "## Boats", "next": None, "title": "Portwick", "headings": ["## Boats"]},
            ]  # fmt: skip
        return [{"written": 2}]

    svc, recorder = services(answer, tmp_path)
    ref = resolve_scope(principal(), Scope.USER)

    async def work(tx: Any) -> int:
        return await term_index.refresh_chunks(tx, svc.settings, ["h"])

    assert await svc.db.scoped(ref).write_tx(work) == 2
    assert asked == [{"ids": ["h"], "below": True}]
    [write] = [c for c in recorder.calls if c.name == "WRITE_CHUNK_TERMS"]
    props = {r["id"]: r["props"] for r in write.params["rows"]}
    after = times(own, 3) + fulltext.bag("## Boats") + terms("Portwick", "Boats")
    assert fulltext.stored_bag(props["p"]["ft"], props["p"]["ft_tf"]) == after
    [apply] = [c for c in recorder.calls if c.name == "APPLY_TERM_STATS"]
    df = {c["term"]: c["df"] for c in apply.params["changes"] if c["kind"] == "chunk"}
    [ferri] = set(fulltext.analyze("Ferries"))
    [boat] = set(fulltext.analyze("Boats"))
    assert df[ferri] == -2  # out of both chunks
    assert df[boat] == 2  # into both


async def test_with_the_lever_off_the_tree_is_not_read(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "READ_CHUNK_CONTEXT":
            asked.append({k: params[k] for k in ("ids", "below")})
            return [
                {"id": "p", "text": "The ferry sails.", "indexed": False, "speaker": None,
                 "ft": None, "ft_tf": None, "prev": None, "next": None, "title": "Portwick",
                 "headings": []},
            ]  # fmt: skip
        return [{"written": 1}]

    svc, recorder = services(answer, tmp_path)
    off = svc.settings.replace(fulltext_context=False)
    ref = resolve_scope(principal(), Scope.USER)

    async def work(tx: Any) -> int:
        return await term_index.refresh_chunks(tx, off, ["p"])

    assert await svc.db.scoped(ref).write_tx(work) == 1
    assert asked == [{"ids": ["p"], "below": False}]
    [write] = [c for c in recorder.calls if c.name == "WRITE_CHUNK_TERMS"]
    [row] = write.params["rows"]
    assert fulltext.stored_bag(row["props"]["ft"], row["props"]["ft_tf"]) == (
        times(fulltext.bag("The ferry sails."), 3)
    )
