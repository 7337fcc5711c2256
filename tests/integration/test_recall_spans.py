"""Spans resolved at ingest and the span lever, on the real Neo4j (lever 6, issue 28 item 1).

A page's "2000-2016" is kept as one range, and a question's "from 2000 to 2016" prefers the
chunk whose range covers it best (``timeSpan`` in ``explain``), never filtering the others.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import date

import pytest
from neo4j import Driver

from palimpsest.domain.ranking.fusion import Levers, Source
from palimpsest.domain.time.timerefs import Range
from palimpsest.identity import Scope
from palimpsest.identity.tokens import principal_from_claims
from palimpsest.resolvers.facts import time_view
from palimpsest.resolvers.recall.planner import recall
from palimpsest.resolvers.recall.request import Mode, RecallRequest
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql

IMPORT = """mutation($m: String!) {
  importDocument(scope: USER, markdown: $m) { summary { id } chunks { id text } } }"""
STORED = """
MATCH (c:Chunk {tenant_id: $tenant}) WHERE c.index IS NOT NULL
RETURN c.text AS text, c.t_start AS t_start, c.t_end AS t_end
"""
EXACT = "Mayors of Oakridge: Ada Brook 2000\u20132016, elected twice."
LONGER = "Mayors of Oakridge: Carl Dunn 1994\u20132016, the longest serving."
INSIDE = "Mayors of Oakridge: the town hall burned in 2004."
ELSEWHERE = "Mayors of Oakridge: Ben Hale 1980\u20131999, before them."
PAGE = "\n\n".join([EXACT, LONGER, INSIDE, ELSEWHERE]) + "\n"
QUESTION = "Who was mayor of Oakridge from 2000 to 2016?"


def day(iso: str) -> int:
    return (date.fromisoformat(iso) - date(1970, 1, 1)).days


async def ask(
    svc: Services, tenant: str, lv: Levers
) -> dict[str, tuple[float, dict[str, float], tuple[Range, ...]]]:
    req = RecallRequest(
        query=QUESTION,
        top_k=10,
        sources=frozenset({Source.DOCUMENTS}),
        view=time_view(svc, None, None),
        mode=Mode.HYBRID,
        levers=lv,
    )
    found = await recall(
        svc,
        principal_from_claims({"tenant": tenant, "user": "alice", "agent": "eval"}),
        [Scope.USER],
        req,
    )
    out = {}
    for h in found.hits:
        assert h.explain is not None
        boosts = {b.lever: b.factor for b in h.explain.boosts}
        out[h.text.strip()] = (h.score, boosts, h.explain.time_ranges)
    return out


async def test_a_question_span_prefers_the_chunk_covering_it_and_filters_nothing(
    gql: Gql, token: Callable[..., str], neo4j_driver: Driver, svc: Services
) -> None:
    tenant = f"ts-{uuid.uuid4().hex[:10]}"
    ok(gql(IMPORT, token(tenant, "alice", "planner"), m=PAGE))
    records, _, _ = neo4j_driver.execute_query(STORED, tenant=tenant)
    kept = {r["text"].strip(): (r["t_start"], r["t_end"]) for r in records}
    assert kept[EXACT] == ([day("2000-01-01")], [day("2017-01-01")])  # one span, not two years
    assert kept[ELSEWHERE] == ([day("1980-01-01")], [day("2000-01-01")])

    on = await ask(svc, tenant, replace(Levers.of(svc.settings), time_span_boost=1.5))
    assert set(on) == {EXACT, LONGER, INSIDE, ELSEWHERE}  # a preference, never a filter
    span = {text: boosts.get("timeSpan", 1.0) for text, (_, boosts, _) in on.items()}
    assert span[EXACT] == pytest.approx(1.5)
    assert span[EXACT] > span[LONGER] > span[INSIDE] > span[ELSEWHERE] == 1.0
    assert on[EXACT][2] == (Range(date(2000, 1, 1), date(2017, 1, 1)),)  # explain.timeRanges

    off = await ask(svc, tenant, replace(Levers.of(svc.settings), time_span_boost=1.0))
    assert all("timeSpan" not in boosts for _, boosts, _ in off.values())
    assert off[EXACT][0] == pytest.approx(on[EXACT][0] / 1.5)


async def test_another_tenants_span_is_never_seen(
    gql: Gql, token: Callable[..., str], svc: Services
) -> None:
    mine, theirs = (f"ts-{uuid.uuid4().hex[:10]}" for _ in range(2))
    ok(gql(IMPORT, token(theirs, "alice", "planner"), m=PAGE))
    assert await ask(svc, mine, replace(Levers.of(svc.settings), time_span_boost=1.5)) == {}
