"""Extractors: what the consolidator draws from a span besides its chunk.

An extractor reads a batch of consolidated turns (one user scope at a time) and proposes
mention edges and facts; the consolidator writes them, in the turns' scope (mentions) or
where the ontology places them (facts). An extractor never touches the database: the only
thing it may ask is ``ScopeView.entities_named``, a read of the scope's entities by name.
No language model runs inside the server: candidate facts come from the runtime's own model
(``provided``) or from a model the operator configures (``model``, ``palimpsest.extraction``),
which is also shown the ``BandingView``: the ontology and the scope's current facts.

Built-ins:

- ``mentions``: links each turn to the entities of its scope it names, by name or alias, on
  word boundaries, case-insensitively; and the speaker as a ``person`` entity.
- ``provided``: the candidate facts the runtime sent with the span, quoting the span (or the
  words of it the fact names as its ``quote``).

Third-party extractors are loaded by name from the ``palimpsest.extractors`` entry point
group: the entry point names a class (instantiated without arguments) or an instance. An
extractor with ``early = True`` (a slow one: ``model``) is run while its batch is embedded,
before the batch ahead is written; the others run just before their batch's write.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

import anyio.to_thread

from palimpsest.domain.names import normalise
from palimpsest.errors import InvalidArgument
from palimpsest.ontology.model import Ontology
from palimpsest.schema.drafts import FactDraft, SourceRef

ENTRY_POINT_GROUP = "palimpsest.extractors"
SPEAKER_TYPE = "person"
MAX_NAME_WORDS = 8  # the longest entity name (in words) the mentions extractor looks for
# Below this many characters in a batch its candidate names are found inline: too little work
# to be worth a thread.
INLINE_CHARS = 16_000
_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Turn:
    """A span as it was written: ``text`` is the chunk text (``speaker: span text``), and the
    span's own text starts at ``quote_start``."""

    id: str  # the span's id, also the chunk's
    text: str
    quote_start: int
    speaker: str | None
    role: str | None
    observed_at: datetime | None
    session_id: str | None
    facts: tuple[FactDraft, ...] = ()


@dataclass(frozen=True, slots=True)
class KnownEntity:
    type: str
    name: str
    norm: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Mention:
    """``turn_id`` names the entity ``(type, name)`` at ``[start, end)`` of its text."""

    turn_id: str
    type: str
    name: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Extraction:
    mentions: list[Mention] = field(default_factory=list)
    facts: list[tuple[str, FactDraft]] = field(default_factory=list)  # (turn id, draft)
    # What the extractor counted (facts kept, dropped by reason, failed spans, tokens):
    # summed into the consolidator's outcome (``resolvers.consolidate.Outcome``).
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class KnownFact:
    """A current fact of the scope, as an extractor is shown it (banding)."""

    subject_type: str
    subject: str
    predicate: str
    object_type: str
    object: str
    valid_at: datetime | None


class ScopeView(Protocol):
    async def entities_named(self, names: Collection[str]) -> list[KnownEntity]:
        """Entities of the scope whose normalised name or alias is one of ``names``."""
        ...


@runtime_checkable
class BandingView(ScopeView, Protocol):
    """What the consolidator's view also answers, for an extractor that shows a model the
    scope: the tenant's ontology, and the current facts about the entities turns name."""

    async def ontology(self) -> Ontology | None:
        """The tenant's ontology as stored (None: none)."""
        ...

    async def facts_about(self, names: Collection[str], limit: int) -> list[KnownFact]:
        """Current facts, newest first, touching the scope's entities named ``names``."""
        ...


@runtime_checkable
class TokenLedger(Protocol):
    """The tenant's model tokens spent today (UTC), for a per-tenant daily cap."""

    async def tokens_today(self) -> int: ...

    async def spend_tokens(self, tokens: int) -> int:
        """Add ``tokens`` to today's count; the count after."""
        ...


@runtime_checkable
class Extractor(Protocol):
    name: str

    async def extract(self, turns: Sequence[Turn], scope: ScopeView) -> Extraction: ...


class MentionsExtractor:
    name = "mentions"

    async def extract(self, turns: Sequence[Turn], scope: ScopeView) -> Extraction:
        if sum(len(t.text) for t in turns) < INLINE_CHARS:
            places = _places(turns)
        else:  # long turns take milliseconds each: not on a serving process's event loop
            places = await anyio.to_thread.run_sync(_places, turns)
        names = {n for found in places.values() for n in found}
        known = await scope.entities_named(names) if names else []
        by_name: dict[str, list[KnownEntity]] = {}
        for e in known:
            for n in {e.norm, *e.aliases}:
                by_name.setdefault(n, []).append(e)
        mentions: list[Mention] = []
        for turn in turns:
            seen: set[tuple[str, str]] = set()
            if turn.speaker and normalise(turn.speaker):
                seen.add((SPEAKER_TYPE, normalise(turn.speaker)))
                end = min(len(turn.speaker), turn.quote_start) or len(turn.speaker)
                mentions.append(Mention(turn.id, SPEAKER_TYPE, turn.speaker, 0, end))
            for norm, (start, end) in places[turn.id].items():
                for e in by_name.get(norm, []):
                    if (e.type, e.norm) not in seen:
                        seen.add((e.type, e.norm))
                        mentions.append(Mention(turn.id, e.type, e.name, start, end))
        return Extraction(mentions=mentions)


class ProvidedExtractor:
    name = "provided"

    async def extract(self, turns: Sequence[Turn], scope: ScopeView) -> Extraction:
        facts = [
            (t.id, _quoting(f, SourceRef(t.id, t.quote_start, len(t.text))))
            for t in turns
            for f in t.facts
        ]
        return Extraction(facts=facts)


def _quoting(draft: FactDraft, source: SourceRef) -> FactDraft:
    return FactDraft(
        subject=draft.subject,
        predicate=draft.predicate,
        object=draft.object,
        object_value=draft.object_value,
        text=draft.text,
        natural_key=draft.natural_key,
        observed_at=draft.observed_at,
        valid_at=draft.valid_at,
        invalid_at=draft.invalid_at,
        source=source,
        quote=draft.quote,
        share_quote=draft.share_quote,
    )


def _places(turns: Sequence[Turn]) -> dict[str, dict[str, tuple[int, int]]]:
    return {t.id: candidates(t.text) for t in turns}


def candidates(text: str) -> dict[str, tuple[int, int]]:
    """Every run of 1-``MAX_NAME_WORDS`` words of ``text``, normalised, with its first place.

    A run starts at a word's first character and ends at a word's last, so a match is always
    on word boundaries: "Ada" is found in "Ada's" but not in "Adam".
    """
    words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
    found: dict[str, tuple[int, int]] = {}
    for i, (start, _) in enumerate(words):
        for _, end in words[i : i + MAX_NAME_WORDS]:
            found.setdefault(normalise(text[start:end]), (start, end))
    return found


BUILT_IN: dict[str, type[Extractor]] = {
    MentionsExtractor.name: MentionsExtractor,
    ProvidedExtractor.name: ProvidedExtractor,
}


def load(
    names: Sequence[str], more: Mapping[str, Callable[[], Extractor]] | None = None
) -> list[Extractor]:
    """The configured extractors, in order; an unknown name is refused at start-up.

    ``more``: built-ins made from the settings (``extraction.load_extractors``: ``model``)."""
    loaded: list[Extractor] = []
    makers: dict[str, Callable[[], Extractor]] = {**BUILT_IN, **(more or {})}
    for name in names:
        if name in makers:
            loaded.append(makers[name]())
            continue
        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == name]
        if not found:
            raise InvalidArgument(
                f"extractor {name!r} is neither built in ({', '.join(makers)}) nor an "
                f"installed {ENTRY_POINT_GROUP!r} entry point"
            )
        target = found[0].load()
        extractor = target() if isinstance(target, type) else target
        if not isinstance(extractor, Extractor):
            raise InvalidArgument(f"extractor {name!r} lacks a `name` and an async `extract`")
        loaded.append(extractor)
    return loaded
