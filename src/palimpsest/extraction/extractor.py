"""The ``model`` extractor: facts drawn from a batch's turns by a model the operator chooses.

One call per part of a conversation (a batch's turns of one session, in order, split when
their text passes ``MAX_CALL_CHARS``), as the reference system makes one call per chat. The
model is shown the turns (speaker, time, text), the tenant's ontology and, for banding, the
current facts about the entities the turns name; it answers in a strict schema
(``candidates.SCHEMA``). What it answers is checked (``candidates.check``) and only what
passes becomes drafts, which the consolidator writes as it writes ``provided`` facts.

A call that fails after its retries leaves its turns without model facts, counted as
``extraction_failed``: the turns themselves are still written, so no span is lost.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import anyio.to_thread

from palimpsest.config import Settings
from palimpsest.domain.names import normalise
from palimpsest.extraction import candidates, metrics, prompt, wire
from palimpsest.extraction.client import Endpoint, ModelClient, ModelFailed
from palimpsest.ontology import Ontology
from palimpsest.ontology.extractors import (
    BandingView,
    Extraction,
    KnownFact,
    ScopeView,
    TokenLedger,
    Turn,
)
from palimpsest.ontology.extractors import candidates as word_runs
from palimpsest.schema.drafts import FactDraft

log = logging.getLogger(__name__)
MAX_CALL_CHARS = 24_000  # turn text per call; a longer conversation part is split
MAX_KNOWN_FACTS = 50  # stored facts shown per call (banding)
CONCURRENT_CALLS = 4  # calls one batch has in flight at once
MAX_STAMP = 200
# The share of a batch's lease its extraction may take: a slower model's calls are given up
# (``extraction_failed``) so the turns are written while the worker still holds them;
# otherwise every lease would expire mid-call, and the spans end as dead letters.
LEASE_SHARE = 0.5


class ModelExtractor:
    name = "model"
    # Run while its batch is embedded, before the batch ahead is written (the consolidator's
    # pipeline): a model call's latency overlaps the rest instead of adding to it.
    early = True

    def __init__(
        self,
        client: ModelClient,
        *,
        version: str = prompt.VERSION,
        tokens_per_day: int = 0,
        budget_seconds: float | None = None,
    ) -> None:
        self.client = client
        self.version = version
        self.tokens_per_day = tokens_per_day  # one tenant's cap (0: none)
        self.budget_seconds = budget_seconds  # one batch's extraction, all calls (None: any)
        # Who the facts say drew them: the extractor, the prompt's version, the model.
        self.stamp = f"model:{version}:{client.endpoint.model}"[:MAX_STAMP]

    @classmethod
    def from_settings(
        cls, settings: Settings, lease_seconds: float | None = None
    ) -> ModelExtractor:
        endpoint = Endpoint(
            protocol=wire.Protocol(settings.model.protocol),
            url=settings.model.url or "",
            model=settings.model.name or "",
            api_key=settings.model.api_key,
            timeout_seconds=settings.model.timeout_seconds,
            max_attempts=settings.model.max_attempts,
            max_answer_bytes=settings.model.max_answer_bytes,
            max_output_tokens=settings.model.max_output_tokens,
        )
        lease = lease_seconds or settings.queue.lease_seconds
        return cls(
            ModelClient(endpoint),
            tokens_per_day=settings.model.max_tokens_per_day,
            budget_seconds=lease * LEASE_SHARE,
        )

    def __repr__(self) -> str:
        return f"ModelExtractor({self.client.endpoint!r}, {self.version})"

    async def extract(self, turns: Sequence[Turn], scope: ScopeView) -> Extraction:
        if not turns:
            return Extraction()
        banding = scope if isinstance(scope, BandingView) else None
        ledger = scope if self.tokens_per_day and isinstance(scope, TokenLedger) else None
        ontology = await banding.ontology() if banding else None
        gate = asyncio.Semaphore(CONCURRENT_CALLS)
        loop = asyncio.get_running_loop()
        ends = None if self.budget_seconds is None else loop.time() + self.budget_seconds

        split = parts(turns)
        shown = await _known(banding, split)

        async def one(part: list[Turn], known: list[KnownFact]) -> _Found:
            async with gate:
                if ledger is not None and (refused := await self._refused(ledger, part)):
                    return refused
                found = await self._part(part, ontology, known, ends)
                spent = found.counts["tokens_in"] + found.counts["tokens_out"]
                if ledger is not None and spent:
                    await ledger.spend_tokens(spent)
                return found

        done = await asyncio.gather(*(one(p, k) for p, k in zip(split, shown, strict=True)))
        counts: Counter[str] = Counter()
        for found in done:
            counts.update(found.counts)
        return Extraction(facts=[f for found in done for f in found.facts], counts=dict(counts))

    async def _refused(self, ledger: TokenLedger, part: list[Turn]) -> _Found | None:
        """The part's turns left without model facts when the tenant's day is spent. The cap
        is checked before each call: calls already in flight may pass it by their own."""
        used = await ledger.tokens_today()
        if used < self.tokens_per_day:
            return None
        log.warning(
            "model extraction refused for %d turn(s): %d tokens spent today, the tenant's cap "
            "is %d (PALIMPSEST_MAX_EXTRACTION_TOKENS_PER_DAY)",
            len(part),
            used,
            self.tokens_per_day,
        )
        metrics.CALLS.labels("refused").inc()
        return _Found([], Counter(extraction_refused=len(part)))

    async def _part(
        self,
        part: list[Turn],
        ontology: Ontology | None,
        known: list[KnownFact],
        ends: float | None,
    ) -> _Found:
        counts: Counter[str] = Counter(calls=1)
        document = prompt.document(part, ontology, known)
        system = prompt.instructions(self.version)
        try:
            async with asyncio.timeout_at(ends):
                answer = await self.client.call(system, document, candidates.SCHEMA)
        except TimeoutError:
            failed = ModelFailed("half the batch's lease passed before an answer", 0)
            return self._failed(part, failed, counts)
        except ModelFailed as failed:
            return self._failed(part, failed, counts)
        metrics.CALLS.labels("answered").inc()
        metrics.TOKENS.labels("in").inc(answer.tokens_in)
        metrics.TOKENS.labels("out").inc(answer.tokens_out)
        counts.update(tokens_in=answer.tokens_in, tokens_out=answer.tokens_out)
        names = {normalise(n) for f in known for n in (f.subject, f.object)}
        checked = candidates.check(answer.payload, part, ontology, names, self.stamp)
        for reason, n in checked.dropped.items():
            metrics.DROPPED.labels(reason).inc(n)
            counts[f"dropped_{reason}"] += n
            counts["dropped"] += n
        metrics.FACTS.inc(len(checked.facts))
        counts["facts"] += len(checked.facts)
        return _Found(checked.facts, counts)

    def _failed(self, part: list[Turn], failed: ModelFailed, counts: Counter[str]) -> _Found:
        # The reason names a status, a class or a cap: never the key or the text.
        log.warning("model extraction failed for %d turn(s): %s", len(part), failed)
        metrics.CALLS.labels("failed").inc()
        metrics.FAILED_SPANS.inc(len(part))
        counts["extraction_failed"] += len(part)
        return _Found([], counts)


@dataclass(frozen=True, slots=True)
class _Found:
    facts: list[tuple[str, FactDraft]]
    counts: Counter[str]


def parts(turns: Sequence[Turn]) -> list[list[Turn]]:
    """The batch's turns by session, in order, each session's cut at ``MAX_CALL_CHARS``."""
    sessions: dict[str | None, list[Turn]] = {}
    for t in turns:
        sessions.setdefault(t.session_id, []).append(t)
    out: list[list[Turn]] = []
    for group in sessions.values():
        part: list[Turn] = []
        size = 0
        for t in group:
            length = min(prompt.MAX_TURN_CHARS, len(t.text) - t.quote_start)
            if part and size + length > MAX_CALL_CHARS:
                out.append(part)
                part, size = [], 0
            part.append(t)
            size += length
        out.append(part)
    return out


async def _known(banding: BandingView | None, split: Sequence[list[Turn]]) -> list[list[KnownFact]]:
    """Per part, the current facts about the entities its turns name (and their speakers).

    Read once for the batch, not once per part: the entities every part names in one read,
    their facts in another (``MAX_KNOWN_FACTS`` per part, newest first), then each part is
    shown those touching its own entities. The word runs of long turns are found off the
    event loop, as the ``mentions`` extractor finds them."""
    if banding is None or not split:
        return [[] for _ in split]
    named = await anyio.to_thread.run_sync(_named, split)
    every = set().union(*named)
    found = await banding.entities_named(every) if every else []
    norms: list[set[str]] = []
    for part, names in zip(split, named, strict=True):
        mine = {e.norm for e in found if e.norm in names or not names.isdisjoint(e.aliases)}
        mine |= {normalise(t.speaker) for t in part if t.speaker}
        mine.discard("")
        norms.append(mine)
    wanted = set().union(*norms)
    if not wanted:
        return [[] for _ in split]
    facts = await banding.facts_about(sorted(wanted), MAX_KNOWN_FACTS * len(split))
    ends = [(normalise(f.subject), normalise(f.object)) for f in facts]
    return [
        [f for f, (s, o) in zip(facts, ends, strict=True) if s in mine or o in mine][
            :MAX_KNOWN_FACTS
        ]
        for mine in norms
    ]


def _named(split: Sequence[list[Turn]]) -> list[set[str]]:
    return [{n for t in part for n in word_runs(t.text[t.quote_start :])} for part in split]
