"""Extractors without a database: candidates on word boundaries, the built-ins, loading."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from importlib.metadata import EntryPoint

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.ontology import extractors as ex
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef


class View:
    """A scope with a fixed set of entities; records what it was asked."""

    def __init__(self, *known: ex.KnownEntity) -> None:
        self.known = known
        self.asked: list[set[str]] = []

    async def entities_named(self, names: Collection[str]) -> list[ex.KnownEntity]:
        self.asked.append(set(names))
        return [e for e in self.known if e.norm in names or set(e.aliases) & set(names)]


def turn(text: str, speaker: str | None = None, *facts: FactDraft, id: str = "t1") -> ex.Turn:
    start = len(speaker) + 2 if speaker else 0
    full = f"{speaker}: {text}" if speaker else text
    return ex.Turn(id, full, start, speaker, None, None, "s", tuple(facts))


def test_candidates_are_word_runs_with_their_first_place() -> None:
    text = "Ada met Ada's friend at checkout-api."
    found = ex.candidates(text)
    assert found["ada"] == (0, 3)
    assert found["ada met"] == (0, 7)
    assert found["checkout-api"] == (text.index("checkout"), len(text) - 1)
    assert "ada" not in ex.candidates("Adam")
    assert "ad" not in found  # never inside a word


def test_candidates_stop_at_the_longest_name() -> None:
    words = " ".join(f"w{i}" for i in range(20))
    longest = max(len(c.split()) for c in ex.candidates(words))
    assert longest == ex.MAX_NAME_WORDS


async def test_mentions_link_known_names_and_aliases_on_word_boundaries() -> None:
    view = View(
        ex.KnownEntity("person", "Ada Lovelace", "ada lovelace", ("ada", "the countess")),
        ex.KnownEntity("service", "checkout-api", "checkout-api"),
        ex.KnownEntity("person", "Adam", "adam"),
    )
    turns = [
        turn("ADA wrote to the Countess about checkout-api", "Bob"),
        turn("Adamant as ever.", None, id="t2"),
    ]
    found = await ex.MentionsExtractor().extract(turns, view)
    got = {(m.turn_id, m.type, m.name, m.start, m.end) for m in found.mentions}
    text = turns[0].text
    assert got == {
        ("t1", "person", "Bob", 0, 3),  # the speaker
        ("t1", "person", "Ada Lovelace", text.index("ADA"), text.index("ADA") + 3),
        ("t1", "service", "checkout-api", text.index("checkout"), len(text)),
    }
    assert len(view.asked) == 1  # one lookup for the whole batch


async def test_the_speaker_is_mentioned_even_when_unknown() -> None:
    found = await ex.MentionsExtractor().extract([turn("hi", "Zoë")], View())
    assert [(m.type, m.name, m.start, m.end) for m in found.mentions] == [("person", "Zoë", 0, 3)]


async def test_provided_facts_quote_the_span_inside_its_turn() -> None:
    fact = FactDraft(EntityRef("person", "Ana"), "likes", None, "tea")
    t = turn("I like tea", "Ana", fact)
    found = await ex.ProvidedExtractor().extract([t, turn("nothing", id="t2")], View())
    [(turn_id, draft)] = found.facts
    assert turn_id == "t1"
    assert draft.source == SourceRef("t1", 5, len(t.text))
    assert t.text[5:] == "I like tea"
    assert (draft.subject, draft.predicate, draft.object_value) == (fact.subject, "likes", "tea")


class Shouting:
    name = "shouting"

    async def extract(self, turns: Sequence[ex.Turn], scope: ex.ScopeView) -> ex.Extraction:
        return ex.Extraction()


class NotAnExtractor:
    pass


def test_built_ins_load_by_name_in_order() -> None:
    loaded = ex.load(["provided", "mentions"])
    assert [e.name for e in loaded] == ["provided", "mentions"]


def test_third_party_extractors_load_from_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    points = [
        EntryPoint("shouting", f"{__name__}:Shouting", ex.ENTRY_POINT_GROUP),
        EntryPoint("broken", f"{__name__}:NotAnExtractor", ex.ENTRY_POINT_GROUP),
    ]
    monkeypatch.setattr(ex, "entry_points", lambda group: [p for p in points if p.group == group])
    [loaded] = ex.load(["shouting"])
    assert isinstance(loaded, Shouting)
    with pytest.raises(InvalidArgument, match="lacks"):
        ex.load(["broken"])
    with pytest.raises(InvalidArgument, match="neither built in"):
        ex.load(["nowhere"])
