"""The session prior on the real Neo4j: a hand-made scope of two sessions (documents) whose
answer is known. The answer turn matches the question less well than a lone turn of another
session, but its session holds several turns that match: with the prior it ranks first, and
each chunk's ``explain`` shows its session's rank. Another user's documents, however well they
match, change nothing (documents are ranked within the scope)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from palimpsest.domain.ranking.fusion import Levers, Source
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall.hits import Hit
from palimpsest.resolvers.recall.planner import Mode, recall
from palimpsest.resolvers.recall.sessions import SESSION
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal

QUESTION = "What did Caroline pack for the kayak trip on the lake?"
TRIP = [
    "Caroline: We finally took the kayak out on the lake last weekend.",
    "Melanie: How was the lake? Did the kayak trip go well?",
    "Caroline: It was calm. I packed my sketchbook and some apples.",
    "Melanie: That sounds like a perfect kayak trip.",
]
ANSWER = TRIP[2]
PRIOR = 10.0
OTHER = [
    "Caroline: My cousin packed sandwiches for the lake picnic of her kayak club trip.",
    "Melanie: I painted a sunset yesterday.",
    "Caroline: Work has been busy this month.",
]


async def load(svc: Services, who: Principal, title: str, turns: list[str]) -> None:
    at = datetime(2023, 5, 8, 13, 0, tzinfo=UTC)
    await importer.import_document(svc, who, Scope.USER, "\n\n".join(turns), title, None, at)


async def ask(svc: Services, who: Principal, levers: Levers, mode: Mode) -> list[Hit]:
    asked = asks.request_of(svc, asks.Ask(QUESTION, top_k=7), frozenset({Source.DOCUMENTS}))
    req = replace(asked, mode=mode, levers=levers)
    return (await recall(svc, who, [Scope.USER], req)).hits


@pytest.mark.parametrize("mode", [Mode.HYBRID, Mode.FULLTEXT])
async def test_the_session_prior_lifts_the_answer_of_the_session_that_matches(
    svc: Services, mode: Mode
) -> None:
    who = principal(tenant_id=f"sessions-{uuid.uuid4().hex[:8]}")
    await load(svc, who, "trip", TRIP)
    await load(svc, who, "other", OTHER)
    off = replace(Levers.of(svc.settings), session_prior=0.0)
    # Two sessions only: their ranks 1 and 2 differ by 1/61 - 1/62, so a heavy weight.
    on = replace(off, session_prior=PRIOR)

    without = await ask(svc, who, off, mode)
    plain = [h.text.strip() for h in without]
    assert plain[0] == OTHER[0]  # the lone, wordier match wins on the legs alone
    assert not [p for h in without if h.explain for p in h.explain.legs if p.leg == SESSION]
    with_prior = await ask(svc, who, on, mode)
    texts = [h.text.strip() for h in with_prior]
    assert texts[0] in TRIP
    assert texts.index(ANSWER) < texts.index(OTHER[0])
    assert texts.index(ANSWER) < plain.index(ANSWER)
    # Every chunk shows its session's rank; the trip's turns share rank 1.
    sessions = {}
    for h in with_prior:
        assert h.explain is not None
        [part] = [p for p in h.explain.legs if p.leg == SESSION]
        sessions[h.text.strip()] = part.rank
    assert {sessions[t] for t in TRIP if t in sessions} == {1}
    assert sessions[OTHER[0]] == 2

    # Another user's sessions, matching the question word for word, move nothing.
    stranger = replace(who, user_id=f"{who.user_id}-other")
    await load(svc, stranger, "copy", [QUESTION, QUESTION, OTHER[0], OTHER[0]])
    again = await ask(svc, who, on, mode)
    assert [(h.id, h.score) for h in again] == [(h.id, h.score) for h in with_prior]
