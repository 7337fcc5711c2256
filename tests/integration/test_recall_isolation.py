"""Scope-local ranking on the real Neo4j: what another tenant stores never moves a scope's
scores, ranks or candidates (issue 12, the word-count ladder attack).

Tenant A plants a ladder of control words with known counts in its own scope, next to rows
holding a guessed word. With index-wide statistics, the guessed word's rank among the
control words tells A how many rows of *other* tenants hold it. Here tenant B then writes
rows holding the guessed word (as chunks, notes and facts) and A asks again: the answer must
be byte-identical, including every score, rank and explanation.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.answers import ok
from tests.integration.conftest import Gql

GUESS = "quokkaberry"
LADDER = ["amberline", "birchwick", "copperfen", "dunmarrow", "elmstead"]
SEARCH = """query($q: String!) { search(scope: USER, query: $q, topK: 50) {
  hits { kind id text score cosine vectorRank fulltextRank
         explain { fused legs { leg rank contribution value } boosts { lever factor } } } } }"""
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  summary { id } } }"""
SET = """mutation($k: String!, $v: JSON!) { memorySet(scope: USER, key: $k, value: $v,
  embed: true) { key } }"""
ASSERT = """mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts,
  place: false) { fact { id } } }"""


def plant_ladder(gql: Gql, who: str) -> None:
    """Control word j appears in j + 1 of A's rows of each kind; the guessed word in one."""
    paragraphs = [f"The {GUESS} grew near the old fence."]
    for j, word in enumerate(LADDER):
        paragraphs += [f"A note about {word} number {n}." for n in range(j + 1)]
    ok(gql(IMPORT, who, m="\n\n".join(paragraphs) + "\n"))
    for i, text in enumerate(paragraphs):
        ok(gql(SET, who, k=f"ladder/{i}", v=text))
    facts = [
        {"subject": {"type": "thing", "name": f"row {i}"}, "predicate": "says", "objectValue": t}
        for i, t in enumerate(paragraphs)
    ]
    ok(gql(ASSERT, who, facts=facts))


def flood(gql: Gql, who: str, rows: int) -> None:
    """Another tenant's rows holding the guessed word, as chunks, notes and facts."""
    lines = [f"Every {GUESS} here, {GUESS} again, row {i} near the old fence." for i in range(rows)]
    ok(gql(IMPORT, who, m="\n\n".join(lines) + "\n"))
    for i in range(0, rows, 5):
        ok(gql(SET, who, k=f"flood/{i}", v=lines[i]))
    facts = [
        {"subject": {"type": "thing", "name": f"flood {i}"}, "predicate": "says", "objectValue": t}
        for i, t in enumerate(lines[:20])
    ]
    ok(gql(ASSERT, who, facts=facts))


def test_another_tenants_rows_never_move_a_scopes_ranking(
    gql: Gql, token: Callable[..., str], ran: list[str]
) -> None:
    a = token(f"iso-a-{uuid.uuid4().hex[:8]}", "alice", "planner")
    plant_ladder(gql, a)
    query = f"{GUESS} " + " ".join(LADDER) + " fence"
    ran.clear()
    before = ok(gql(SEARCH, a, q=query))["search"]["hits"]
    # On the procedure engine (the suite's Neo4j has the extension) the search is the one
    # statement (``recall_one.SEARCH_ONE``): the attack runs against it.
    assert "SEARCH_ONE" in ran
    # The ladder is visible: every kind answers, ranked by the full-text leg too.
    assert {h["kind"] for h in before} == {"DOCUMENTS", "NOTES", "FACTS"}
    ranked = [h for h in before if h["fulltextRank"] is not None]
    assert any(GUESS in h["text"] for h in ranked)
    for n in (1, 2):
        b = token(f"iso-b-{uuid.uuid4().hex[:8]}", "bob", "planner")
        flood(gql, b, 40 * n)
        after = ok(gql(SEARCH, a, q=query))["search"]["hits"]
        assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)


def test_the_same_scope_in_another_tenant_sees_its_own_statistics(
    gql: Gql, token: Callable[..., str]
) -> None:
    # The same rows in two scopes rank the same; a scope that adds rows of its own does move.
    a = token(f"iso-a-{uuid.uuid4().hex[:8]}", "alice", "planner")
    c = token(f"iso-c-{uuid.uuid4().hex[:8]}", "alice", "planner")
    for who in (a, c):
        plant_ladder(gql, who)
    query = f"{GUESS} {LADDER[0]}"

    def ranks(who: str) -> tuple[list[str], list[int]]:
        hits = ok(gql(SEARCH, who, q=query))["search"]["hits"]
        # Rows planted alike tie, in BM25 and in cosine, and ties break by random ids, so
        # which row takes which rank (and so its fused score) may differ between the scopes;
        # compared are the texts found and the full-text ranks handed out. Byte-identical
        # answers for one scope are the test above.
        texts = sorted(h["text"] for h in hits)
        return texts, sorted(h["fulltextRank"] or 0 for h in hits)

    assert ranks(a) == ranks(c)
    flood(gql, c, 20)  # c's own rows now hold the guessed word many times
    assert ranks(a) != ranks(c)


STATS = """
MATCH (s:TermStats {scope_key: $key, kind: 'chunk'})
RETURN s.term AS term, sum(s.df) AS df, sum(s.len) AS len
"""
KEY_OF = "MATCH (d:Document {id: $id}) RETURN d.scope_key AS key"
DOC = """query($id: ID!) { document(scope: USER, id: $id) { chunks { id revision text } } }"""
UPDATE = """mutation($id: ID!, $t: String!, $r: Int!) { updateChunk(scope: USER, id: $id,
  text: $t, revision: $r) { id } }"""
DELETE = """mutation($id: ID!) { deleteDocument(scope: USER, id: $id) { chunksDeleted } }"""
FIND = """query($q: String!) { search(scope: USER, query: $q, sources: [DOCUMENTS]) {
  hits { id fulltextRank } } }"""


def test_edits_reindex_neighbours_and_deletes_empty_the_statistics(
    gql: Gql, token: Callable[..., str], neo4j_driver: Any
) -> None:
    who = token(f"iso-e-{uuid.uuid4().hex[:8]}", "alice", "planner")
    doc = ok(gql(IMPORT, who, m="First plain line.\n\nSecond plain line.\n\nThird plain line.\n"))
    doc_id = doc["importDocument"]["summary"]["id"]
    [record] = neo4j_driver.execute_query(KEY_OF, id=doc_id).records
    key = record["key"]

    def stats() -> dict[str, tuple[int, int]]:
        rows = neo4j_driver.execute_query(STATS, key=key).records
        return {r["term"]: (r["df"], r["len"]) for r in rows if r["df"] or r["len"]}

    before = stats()
    assert before[""][0] == 3  # three chunks
    assert before["plain"][0] == 3
    chunks = ok(gql(DOC, who, id=doc_id))["document"]["chunks"]
    middle = chunks[1]
    ok(gql(UPDATE, who, id=middle["id"], t="Second zanzibarite line.", r=middle["revision"]))
    after = stats()
    assert after["zanzibarit"][0] == 3  # the chunk itself and both neighbours quote it
    assert after["plain"][0] == 3  # its neighbours still hold "plain" of their own
    hits = ok(gql(FIND, who, q="zanzibarite"))["search"]["hits"]
    assert hits[0]["id"] == middle["id"]  # twice in its own text: ranked first
    assert {h["id"] for h in hits if h["fulltextRank"]} == {c["id"] for c in chunks}
    ok(gql(DELETE, who, id=doc_id))
    assert stats() == {}  # every count and length is back to zero


EXPLAINED = """query($q: String!) { search(scope: USER, query: $q, sources: [DOCUMENTS]) {
  hits { text score vectorRank fulltextRank
         explain { fused legs { leg rank contribution value beyondDepth }
                   boosts { lever factor } } } } }"""


def test_explain_adds_up_and_names_the_boosts_of_a_when_question(
    gql: Gql, token: Callable[..., str]
) -> None:
    who = token(f"iso-x-{uuid.uuid4().hex[:8]}", "alice", "planner")
    turns = [
        "Mira: I adopted a puppy last week.",
        "Tomas: The puppy sounds lovely.",
        "Mira: The puppy chewed my shoes in 2019 too.",
    ]
    ok(gql(IMPORT, who, m="\n\n".join(turns) + "\n"))
    # Another document with no word of the question: the full-text leg misses it.
    turns.append("Tomas: I like sailing.")
    ok(gql(IMPORT, who, m=turns[-1] + "\n"))
    hits = ok(gql(EXPLAINED, who, q="When did Mira adopt the puppy?"))["search"]["hits"]
    for h in hits:
        h["text"] = h["text"].strip()
    assert {h["text"] for h in hits} == set(turns)
    for h in hits:
        e = h["explain"]
        assert sum(p["contribution"] for p in e["legs"]) == pytest.approx(e["fused"])
        factor = 1.0
        for b in e["boosts"]:
            factor *= b["factor"]
        assert h["score"] == pytest.approx(e["fused"] * factor)
        # Both legs speak for every hit: the rank the leg returned it at, or (not returned)
        # just past the leg's pool of 2 x topK = 20, with no value of its own.
        assert sorted(p["leg"] for p in e["legs"]) == ["fulltext", "vector"]
        for p in e["legs"]:
            returned = h["vectorRank"] if p["leg"] == "vector" else h["fulltextRank"]
            assert p["beyondDepth"] is (returned is None)
            assert p["rank"] == (21 if returned is None else returned)
            assert (p["value"] is None) is p["beyondDepth"]
            assert p["contribution"] == pytest.approx(1 / (60 + p["rank"]))
    levers = {h["text"]: {b["lever"] for b in h["explain"]["boosts"]} for h in hits}
    # Mira's turns are preferred (she is the one speaker named), and a "when" question
    # prefers turns that carry a time expression; Tomas' turn carries neither.
    assert levers[turns[0]] == {"speaker", "whenQuestion"}
    assert levers[turns[2]] == {"speaker", "whenQuestion"}
    assert levers[turns[1]] == set()
    assert levers[turns[3]] == set()
    [missed] = [h for h in hits if h["fulltextRank"] is None]
    assert missed["text"] == turns[3]
    assert hits[0]["text"] == turns[0]
