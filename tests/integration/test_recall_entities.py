"""The entity step on the real Neo4j: a hand-made scope whose answer is known. The question
names Melanie's brother; the answer turn names him only as Oscar, and shares no word with the
question but the speaker. The best hit, the turn that introduces him, names Oscar and
Portland: the second full-text query (the question's terms plus those names) finds the
answer turn, which no leg of the first step found (a pool of 3), and it then ranks above
the turns that only share the speaker; its
``explain`` shows the leg ``entities``. Another user's turns naming Oscar change nothing (the
step reads the scope's own candidates and rows)."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from palimpsest.domain.ranking.fusion import Levers, Source
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.facts.ledger import time_view
from palimpsest.resolvers.recall.entities import ENTITIES
from palimpsest.resolvers.recall.hits import Hit
from palimpsest.resolvers.recall.planner import Mode, RecallRequest, recall
from palimpsest.resolvers.services import Services
from tests.integration.test_recall_sessions import load
from tests.unit.principals import principal

QUESTION = "What job does Melanie's brother have?"
FIRST = [
    "Melanie: My brother Oscar moved to Portland last spring.",
    "Caroline: That is a big move. Does he like it?",
    "Melanie: He loves the rain, believe it or not.",
]
LATER = [
    "Caroline: Any news from the family?",
    "Melanie: Oscar started as a nurse at the children's hospital!",
    "Melanie: I baked bread all weekend.",
    "Melanie: The garden is full of tomatoes this year.",
    "Melanie: I finally fixed the old bicycle.",
    "Melanie: We watched a film about whales.",
]
ANSWER = LATER[1]
WEIGHT = 2.0


async def ask(svc: Services, who: Principal, levers: Levers, mode: Mode) -> list[Hit]:
    """The question's top 4 documents' chunks, every leg's pool 3 deep."""
    view = time_view(svc, None, None)
    req = RecallRequest(QUESTION, 4, frozenset({Source.DOCUMENTS}), view, pool=3, mode=mode)
    req = replace(req, rrf_k=svc.settings.recall.rrf_k, levers=levers)
    return (await recall(svc, who, [Scope.USER], req)).hits


def entity_parts(hits: list[Hit]) -> dict[str, int]:
    return {
        h.text.strip(): p.rank
        for h in hits
        if h.explain
        for p in h.explain.legs
        if p.leg == ENTITIES
    }


@pytest.mark.parametrize("mode", [Mode.HYBRID, Mode.FULLTEXT])
async def test_the_entity_step_finds_the_turn_that_names_the_best_hit_s_entity(
    svc: Services, mode: Mode
) -> None:
    who = principal(tenant_id=f"entities-{uuid.uuid4().hex[:8]}")
    await load(svc, who, "first", FIRST)
    await load(svc, who, "later", LATER)
    off = replace(Levers.of(svc.settings), entity_weight=0.0)
    on = replace(off, entity_weight=WEIGHT)

    without = await ask(svc, who, off, mode)
    plain = [h.text.strip() for h in without]
    assert plain[0] == FIRST[0]  # the turn that names the brother
    assert not entity_parts(without)
    with_step = await ask(svc, who, on, mode)
    texts = [h.text.strip() for h in with_step]
    assert ANSWER not in plain  # no leg of the first step finds it
    assert texts[0] == FIRST[0]
    # Above the turns that share only the speaker; the first turn's neighbour (its
    # full-text representation holds the first turn's words) may come before it.
    assert ANSWER in texts[:3]
    parts = entity_parts(with_step)
    assert parts[ANSWER] <= 3
    assert parts[FIRST[0]] == 1

    # Another user's turns, naming Oscar and Portland again and again, move nothing.
    stranger = replace(who, user_id=f"{who.user_id}-other")
    await load(svc, stranger, "copy", ["Oscar Portland nurse.", "Oscar in Portland.", QUESTION])
    again = await ask(svc, who, on, mode)
    assert [(h.id, h.score) for h in again] == [(h.id, h.score) for h in with_step]


async def test_without_a_new_name_no_second_query_runs(svc: Services) -> None:
    who = principal(tenant_id=f"entities-{uuid.uuid4().hex[:8]}")
    await load(svc, who, "plain", ["Melanie: my brother is well.", "Caroline: good to hear."])
    on = replace(Levers.of(svc.settings), entity_weight=WEIGHT)
    hits = await ask(svc, who, on, Mode.FULLTEXT)
    assert hits
    assert not entity_parts(hits)
