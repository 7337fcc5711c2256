"""Time resolved at ingest, on the real Neo4j (recall lever 6, issue 28 item 1).

A chunk's time expressions are resolved against its ``observedAt`` when it is written (by
``importDocument``, by ``updateChunk``, and by the consolidator for harvested turns), kept as
``t_start``/``t_end`` epoch days, shown in ``explain`` and read by two soft boosts: a question's
dates overlapping a range (``timeRange``), and "when" questions preferring specific ranges
(``whenSpecific``). Neither ever filters; rows without ranges keep working as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import httpx
import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.domain.ranking.fusion import Levers, Source
from palimpsest.identity import Scope
from palimpsest.identity.tokens import principal_from_claims
from palimpsest.resolvers.facts import time_view
from palimpsest.resolvers.recall.planner import recall
from palimpsest.resolvers.recall.request import Mode, RecallRequest
from palimpsest.resolvers.services import Services
from palimpsest.server import serve_in_thread
from tests.integration.answers import ok
from tests.integration.conftest import Gql, gql_over
from tests.integration.cycle import drain, harvest

IMPORT = """mutation($m: String!, $at: Instant) {
  importDocument(scope: USER, markdown: $m, observedAt: $at) {
    summary { id } chunks { id text revision } } }"""
UPDATE = """mutation($id: ID!, $t: String!, $r: Int!) {
  updateChunk(scope: USER, id: $id, text: $t, revision: $r) { id } }"""
EXPLAINED = """query($q: String!) { search(scope: USER, query: $q, topK: 10) {
  hits { text score explain { fused boosts { lever factor } timeRanges { start end } } } } }"""
STORED = """
MATCH (c:Chunk {tenant_id: $tenant}) WHERE c.index IS NOT NULL
RETURN c.text AS text, c.t_start AS t_start, c.t_end AS t_end
"""
SAID = "2023-05-08T13:56:00Z"  # a Monday
TURNS = [
    "Mira: I went to the pottery class yesterday.",
    "Mira: Pottery is my favourite class, honestly.",
    "Mira: The pottery class was full last month.",
    "Tomas: I want to join the pottery class in 2019 style.",
]


def stored(driver: Driver, tenant: str) -> dict[str, tuple[Any, Any]]:
    records, _, _ = driver.execute_query(STORED, tenant=tenant)
    return {r["text"].strip(): (r["t_start"], r["t_end"]) for r in records}


def by_text(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {h["text"].strip(): h for h in ok(body)["search"]["hits"]}


def levers(hit: dict[str, Any]) -> dict[str, float]:
    return {b["lever"]: b["factor"] for b in hit["explain"]["boosts"]}


def day(iso: str) -> int:
    from datetime import date

    return (date.fromisoformat(iso) - date(1970, 1, 1)).days


ON = {"time_boost": 1.5, "time_when_boost": 1.3}  # the boosts on, whatever the defaults


@pytest.fixture(scope="module")
def time_gql(settings: Settings) -> Iterator[Gql]:
    """The app with both time boosts on."""
    on = settings.replace(**{f"recall_{k}": v for k, v in ON.items()})
    with serve_in_thread(on) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield gql_over(client)


def test_imported_turns_keep_their_resolved_ranges_and_explain_shows_them(
    time_gql: Gql, token: Callable[..., str], tenant_id: str, neo4j_driver: Driver
) -> None:
    gql = time_gql
    who = token(tenant_id, "alice", "planner")
    ok(gql(IMPORT, who, m="\n\n".join(TURNS) + "\n", at=SAID))
    assert stored(neo4j_driver, tenant_id) == {
        TURNS[0]: ([day("2023-05-07")], [day("2023-05-08")]),
        TURNS[1]: (None, None),
        TURNS[2]: ([day("2023-04-01")], [day("2023-05-01")]),
        TURNS[3]: ([day("2019-01-01")], [day("2020-01-01")]),
    }
    hits = by_text(gql(EXPLAINED, who, q="What did Mira do at the pottery class on 7 May 2023?"))
    assert set(hits) == set(TURNS)  # a preference, never a filter
    assert "timeRange" in levers(hits[TURNS[0]])
    assert hits[TURNS[0]]["explain"]["timeRanges"] == [{"start": "2023-05-07", "end": "2023-05-08"}]
    for text in TURNS[1:]:
        assert "timeRange" not in levers(hits[text]), text
    for h in hits.values():
        factor = 1.0
        for f in levers(h).values():
            factor *= f
        assert h["score"] == pytest.approx(h["explain"]["fused"] * factor)


def test_when_questions_prefer_the_more_specific_range(
    time_gql: Gql, token: Callable[..., str], tenant_id: str
) -> None:
    gql = time_gql
    who = token(tenant_id, "alice", "planner")
    ok(gql(IMPORT, who, m="\n\n".join(TURNS) + "\n", at=SAID))
    hits = by_text(gql(EXPLAINED, who, q="When did Mira go to the pottery class?"))
    assert set(hits) == set(TURNS)
    specific = {t: levers(h).get("whenSpecific", 1.0) for t, h in hits.items()}
    assert "whenSpecific" not in levers(hits[TURNS[1]])  # no time expression
    assert "whenSpecific" not in levers(hits[TURNS[3]])  # a year says no more than years do
    assert specific[TURNS[0]] > specific[TURNS[2]] > 1.0  # a day over a month


async def test_edits_and_consolidated_turns_get_ranges_against_their_own_time(
    gql: Gql, token: Callable[..., str], tenant_id: str, neo4j_driver: Driver, svc: Services
) -> None:
    who = token(tenant_id, "alice", "planner", session="s1")
    doc = ok(gql(IMPORT, who, m=TURNS[1] + "\n", at=SAID))["importDocument"]
    [chunk] = doc["chunks"]
    edited = "Mira: Pottery is my favourite class, I went last Saturday."
    ok(gql(UPDATE, who, id=chunk["id"], t=edited + "\n", r=chunk["revision"]))
    assert stored(neo4j_driver, tenant_id)[edited] == ([day("2023-05-06")], [day("2023-05-07")])

    harvest(gql, who, ["We moved the kiln two weeks ago."], observedAt="2024-03-11T18:00:00Z")
    await drain(svc, tenant_id, "alice")
    turns = {t: r for t, r in stored(neo4j_driver, tenant_id).items() if "kiln" in t}
    assert list(turns.values()) == [([day("2024-02-23")], [day("2024-03-01")])]


async def test_switched_off_and_rows_without_ranges_rank_as_before(
    gql: Gql, token: Callable[..., str], tenant_id: str, neo4j_driver: Driver, svc: Services
) -> None:
    who = token(tenant_id, "alice", "planner")
    ok(gql(IMPORT, who, m="\n\n".join(TURNS) + "\n", at=SAID))
    question = "When did Mira go to the pottery class on 7 May 2023?"

    async def ask(lv: Levers) -> dict[str, tuple[float, set[str], int]]:
        req = RecallRequest(
            query=question,
            top_k=10,
            sources=frozenset({Source.DOCUMENTS}),
            view=time_view(svc, None, None),
            mode=Mode.HYBRID,
            levers=lv,
        )
        found = await recall(
            svc,
            principal_from_claims({"tenant": tenant_id, "user": "alice", "agent": "eval"}),
            [Scope.USER],
            req,
        )
        return {
            h.text.strip(): (
                h.score,
                {b.lever for b in h.explain.boosts} if h.explain else set(),
                len(h.explain.time_ranges) if h.explain else 0,
            )
            for h in found.hits
        }

    on = await ask(replace(Levers.of(svc.settings), time_boost=1.5, time_when_boost=1.3))
    off = await ask(
        replace(Levers.of(svc.settings), time_boost=1.0, time_when_boost=1.0, time_span_boost=1.0)
    )
    assert {"timeRange", "whenSpecific"} <= on[TURNS[0]][1]
    assert on[TURNS[0]][2] == 1
    for text, (_, named, ranges) in off.items():
        assert not named & {"timeRange", "whenSpecific"}, text
        assert ranges == 0
    # A document written before ranges were kept has no t_start/t_end: it ranks exactly as
    # with the lever off (no migration needed).
    neo4j_driver.execute_query(
        "MATCH (c:Chunk {tenant_id: $tenant}) REMOVE c.t_start, c.t_end", tenant=tenant_id
    )
    assert await ask(replace(Levers.of(svc.settings), time_boost=1.5, time_when_boost=1.3)) == off
