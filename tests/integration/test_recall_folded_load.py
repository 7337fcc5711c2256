"""The top-k load folded into the legs, on the real Neo4j: vector legs and the full-text legs'
cue reads return what a hit shows of the rows they keep, so a search whose top-k all came that
way runs no final load. Its exactness is held against the oracle of the final load itself:
for every query of a random scope of notes and document chunks, the hits (ids, order,
scores, texts, documents, provenance, explanations) are exactly those the same search gives
when every hit is loaded by ``LOAD_HITS``."""

from __future__ import annotations

import random
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.notes import keyvalue as notes
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.recall import plan as recall_plan
from palimpsest.resolvers.recall import planner as rr
from palimpsest.resolvers.recall.hits import Hit
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal

WORDS = [
    "heron",
    "lantern",
    "quarry",
    "saffron",
    "otter",
    "violet",
    "maple",
    "cobalt",
    "ember",
    "harbor",
    "tundra",
]
QUERIES = 25


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 9)))


async def _search(svc: Services, who: Any, text: str) -> list[Hit]:
    req = rr.RecallRequest(
        query=text,
        top_k=5,
        sources=pure.SEARCH_DEFAULT,
        view=facts.time_view(svc, None, None),
        levers=pure.Levers.of(svc.settings),
    )
    return (await rr.recall(svc, who, [Scope.USER], req)).hits


async def test_folded_rows_answer_exactly_as_the_final_load(
    svc: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(29)
    who = principal(tenant_id=f"folded-{uuid.uuid4().hex[:8]}")
    for i in range(40):
        await notes.set_value(svc, who, Scope.USER, f"n/{i}", _text(rng), None, False, None)
    paragraphs = "\n\n".join(_text(rng) + "." for _ in range(40))
    await importer.import_document(svc, who, Scope.USER, paragraphs, "doc", None, None)
    queries = [" ".join(rng.sample(WORDS, rng.randint(1, 3))) for _ in range(QUERIES)]

    loads: list[int] = []
    real_load = legs.load_hits

    async def counted(
        tx: ScopedTx, ids: Mapping[pure.Source, Sequence[str]], known_at: datetime | None = None
    ) -> dict[pure.Source, list[Row]]:
        loads.append(sum(len(v) for v in ids.values()))
        return await real_load(tx, ids, known_at)

    monkeypatch.setattr(legs, "load_hits", counted)
    folded = [await _search(svc, who, q) for q in queries]
    assert loads == []  # every hit came with its leg's rows: no final load ran
    monkeypatch.setattr(recall_plan, "_carried", lambda lists: {})  # the oracle: load every hit
    oracle = [await _search(svc, who, q) for q in queries]
    assert len(loads) == QUERIES
    assert folded == oracle
    kinds = {h.kind for hits in folded for h in hits}
    assert kinds == {pure.Source.NOTES, pure.Source.DOCUMENTS}
    assert all(h.provenance is not None and h.text for hits in folded for h in hits)
