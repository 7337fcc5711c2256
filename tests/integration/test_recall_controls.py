"""Recall's per-call controls on the real Neo4j (docs/reference/recall.md, Per-call controls):
``minScore``, ``recencyHalfLife``, ``weights`` and ``maxPerDocument`` on ``recall`` and
``search``, through GraphQL and MCP, each shown in ``explain``; bad values refused, naming
the field, before anything is read."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from palimpsest.identity import Scope
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.test_mcp import call, http_client

HITS = """hits { kind id key documentId score cosine vectorRank fulltextRank
  explain { fused floor documentPlace legs { leg rank contribution weight beyondDepth }
            boosts { lever factor } } }"""
CONTROLS = """ controls { minScore belowMinScore recencyHalfLifeSeconds recencyReference
  maxPerDocument overDocumentCap }"""
RECALL = (
    "query($q: String!, $k: Int! = 10, $min: Float, $half: String, $w: LegWeightsInput,"
    " $per: Int, $when: WhenInput, $sources: [Source!]) {"
    " recall(scope: USER, query: $q, topK: $k, minScore: $min, recencyHalfLife: $half,"
    " weights: $w, maxPerDocument: $per, when: $when, sources: $sources) { "
    + HITS
    + CONTROLS
    + " } }"
)
SEARCH = RECALL.replace(" recall(", " search(")
SET = """mutation($k: String!, $v: JSON!, $at: Instant, $embed: Boolean! = true) {
  memorySet(scope: USER, key: $k, value: $v, embed: $embed, observedAt: $at) { key } }"""
IMPORT = (
    """mutation($m: String!) { importDocument(scope: USER, markdown: $m) { summary { id } } }"""
)
FERRY = "The Hydra ferry leaves the harbour at 7:40 every morning"


def answer(gql: Gql, who: str, query: str = RECALL, **variables: Any) -> dict[str, Any]:
    data = ok(gql(query, who, **variables))
    found: dict[str, Any] = data["search" if "search" in data else "recall"]
    return found


def hits(gql: Gql, who: str, query: str = RECALL, **variables: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = answer(gql, who, query, **variables)["hits"]
    return found


@pytest.fixture
def who(token: Callable[..., str], tenant_id: str) -> str:
    return token(tenant_id, "alice", "planner", memory_scopes=[Scope.USER])


def note(gql: Gql, who: str, key: str, text: str, **extra: Any) -> None:
    ok(gql(SET, who, k=key, v=text, **extra))


def test_recency_puts_the_newer_of_two_tied_notes_first(gql: Gql, who: str) -> None:
    # One text, two dates: the legs can tell them apart only by key, so the older is first.
    note(gql, who, "a-old", FERRY, at="2024-01-01T00:00:00Z")
    note(gql, who, "b-new", FERRY, at="2024-12-02T00:00:00Z")
    q = "when does the Hydra ferry leave"
    plain = hits(gql, who, q=q)
    assert [h["key"] for h in plain] == ["a-old", "b-new"]
    assert plain[0]["cosine"] == pytest.approx(plain[1]["cosine"])
    assert all(b["lever"] != "recency" for h in plain for b in h["explain"]["boosts"])
    when = {"to": "2025-01-01T00:00:00Z"}  # the reference: 30 days after the newer note
    full = answer(gql, who, q=q, half="30d", when=when)
    assert full["controls"]["recencyHalfLifeSeconds"] == 30 * 86400
    assert full["controls"]["recencyReference"].startswith("2025-01-01T00:00:00")
    assert answer(gql, who, q=q, when=when)["controls"] is None  # no control given
    recent = full["hits"]
    assert [h["key"] for h in recent] == ["b-new", "a-old"]
    by_key = {h["key"]: h for h in recent}
    for key, days in (("a-old", 366), ("b-new", 30)):
        explain = by_key[key]["explain"]
        [boost] = [b for b in explain["boosts"] if b["lever"] == "recency"]
        assert boost["factor"] == pytest.approx(2 ** (-days / 30))
        factors = math.prod(b["factor"] for b in explain["boosts"])
        assert by_key[key]["score"] == pytest.approx(explain["fused"] * factors)
    # Never a filter: both notes are still there with a half-life of a minute.
    assert len(hits(gql, who, q=q, half="1m")) == 2


def test_min_score_drops_poor_matches_and_keeps_word_matches_by_full_text_rank(
    gql: Gql, who: str
) -> None:
    note(gql, who, "ferry", FERRY)
    note(gql, who, "tuna", "My cat only eats tuna from the blue tin")
    note(gql, who, "ticket", "Hydra ferry ticket code XJ42", embed=False)  # no cosine at all
    q = "when does the Hydra ferry leave the harbour"
    plain = {h["key"]: h for h in hits(gql, who, q=q)}
    assert set(plain) == {"ferry", "tuna", "ticket"}
    assert plain["ticket"]["cosine"] is None
    assert plain["ticket"]["fulltextRank"] == 2
    floor = (plain["ferry"]["cosine"] + plain["tuna"]["cosine"]) / 2
    floored = answer(gql, who, q=q, min=floor)
    assert floored["controls"]["belowMinScore"] == 1
    assert floored["controls"]["minScore"] == pytest.approx(floor)
    kept = {h["key"]: h for h in floored["hits"]}
    assert set(kept) == {"ferry", "ticket"}
    assert kept["ferry"]["explain"]["floor"] == "cosine"
    assert kept["ticket"]["explain"]["floor"] == "fulltext"  # full-text rank 2, within topK 2
    # With topK 1 its full-text rank (2) is outside topK: it has nothing left to stand on.
    assert [h["key"] for h in hits(gql, who, q=q, min=floor, k=1)] == ["ferry"]
    assert all(h["explain"]["floor"] is None for h in plain.values())


def test_weights_change_the_fusion_and_show_in_explain(gql: Gql, who: str) -> None:
    note(gql, who, "ferry", FERRY)
    note(gql, who, "ticket", "Hydra ferry ticket code XJ42", embed=False)
    note(gql, who, "boat", "The boat to the island departs early")
    q = "Hydra ferry"
    words = hits(gql, who, q=q, w={"vector": 0.0})
    assert [h["key"] for h in words[:2]] == sorted(
        ("ferry", "ticket"), key=lambda k: next(h["fulltextRank"] for h in words if h["key"] == k)
    )
    for h in words:
        for leg in h["explain"]["legs"]:
            assert leg["weight"] == (0.0 if leg["leg"] == "vector" else 1.0)
            assert leg["contribution"] == pytest.approx(leg["weight"] / (60 + leg["rank"]))
    meaning = hits(gql, who, q=q, w={"vector": 2.0, "fulltext": 0.0})
    ranked = [h for h in meaning if h["vectorRank"] is not None]
    assert [h["vectorRank"] for h in ranked] == sorted(h["vectorRank"] for h in ranked)
    # No vector rank: it ranks just past the vector pool (2 x topK), its word rank weighs 0.
    assert meaning[-1]["key"] == "ticket"
    [vector] = [leg for leg in meaning[-1]["explain"]["legs"] if leg["leg"] == "vector"]
    assert vector["beyondDepth"]
    assert meaning[-1]["score"] == pytest.approx(2.0 / (60 + 21))
    assert {leg["weight"] for h in meaning for leg in h["explain"]["legs"]} == {2.0, 0.0}


def test_max_per_document_caps_each_documents_hits(gql: Gql, who: str) -> None:
    long_doc = "# Ferries\n\n" + "\n\n".join(
        f"The Hydra ferry number {i} leaves the harbour at dawn." for i in range(5)
    )
    short_doc = "# Boats\n\nA small ferry crosses to the island at noon."
    for markdown in (long_doc, short_doc):
        ok(gql(IMPORT, who, m=markdown))
    note(gql, who, "ferry", FERRY)
    args: dict[str, Any] = {"q": "Hydra ferry harbour", "k": 10}
    plain = hits(gql, who, SEARCH, **args)
    per_doc = Counter(h["documentId"] for h in plain if h["documentId"])
    assert max(per_doc.values()) > 2
    report = answer(gql, who, SEARCH, per=2, **args)
    assert report["controls"]["maxPerDocument"] == 2
    assert report["controls"]["overDocumentCap"] >= 3  # the long document's 5 less 2 at least
    capped = report["hits"]
    counts = Counter(h["documentId"] for h in capped if h["documentId"])
    assert set(counts) == set(per_doc)
    assert max(counts.values()) == 2
    assert any(h["kind"] == "NOTES" for h in capped)  # a row of no document is not limited
    for h in capped:
        place = h["explain"]["documentPlace"]
        assert place is None if h["documentId"] is None else place in (1, 2)


@pytest.mark.parametrize(
    ("variables", "field"),
    [
        ({"min": 1.5}, "minScore"),
        ({"half": "30 days"}, "recencyHalfLife"),
        ({"half": "0h"}, "recencyHalfLife"),
        ({"w": {"vector": -1.0}}, "weights.vector"),
        ({"w": {"vector": 0.0, "fulltext": 0.0}}, "both be 0"),
        ({"per": 0}, "maxPerDocument"),
    ],
)
def test_a_bad_control_is_invalid_argument_naming_it(
    gql: Gql, who: str, variables: dict[str, Any], field: str
) -> None:
    for query in (RECALL, SEARCH):
        body = gql(query, who, q="ferry", **variables)
        [error] = body["errors"]
        assert error["extensions"]["code"] == "INVALID_ARGUMENT"
        assert field in error["message"]


async def test_mcp_recall_and_search_take_the_controls_through_the_same_code(
    live_server_url: str, gql: Gql, who: str
) -> None:
    note(gql, who, "a-old", FERRY, at="2024-01-01T00:00:00Z")
    note(gql, who, "b-new", FERRY, at="2024-12-02T00:00:00Z")
    note(gql, who, "tuna", "My cat only eats tuna from the blue tin")
    ok(gql(IMPORT, who, m="# Ferries\n\n" + "\n\n".join(f"The Hydra ferry {i}." for i in range(4))))
    q = "when does the Hydra ferry leave"
    async with http_client(live_server_url, who) as client:
        chunks = await call(client, "search", query=q, sources=["documents"])
        plain = await call(client, "recall", query=q)
        recent = await call(client, "recall", query=q, recency_half_life="30d", min_score=0.3)
        searched = await call(
            client, "search", query=q, weights={"fulltext": 0.0}, max_per_document=1
        )
        bad = await client.call_tool("search", {"query": q, "recency_half_life": "soon"})
    assert [h["key"] for h in plain["hits"]][:2] == ["a-old", "b-new"]
    assert [h["key"] for h in recent["hits"]] == ["b-new", "a-old"]
    assert all(h["floor"] == "cosine" and "recency" in h["boosts"] for h in recent["hits"])
    assert len(chunks["hits"]) > 1
    [chunk] = [h for h in searched["hits"] if h["kind"] == "documents"]
    assert chunk["document_place"] == 1
    assert {h["key"] for h in searched["hits"] if h["kind"] == "notes"} == {
        "a-old",
        "b-new",
        "tuna",
    }
    assert bad.is_error
    assert bad.structured_content is not None
    assert bad.structured_content["error"]["code"] == "INVALID_ARGUMENT"
    assert "recencyHalfLife" in bad.structured_content["error"]["message"]
