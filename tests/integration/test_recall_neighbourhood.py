"""The full-text neighbourhood is for short chunks (``PALIMPSEST_FULLTEXT_NEIGHBOURS_MAX_TERMS``,
default 64 terms), on the real Neo4j: a chat line quotes the short lines around it, but not a
long message beside it, and a long message quotes nothing but itself; an edit that makes a
chunk long takes its words out of its neighbours' representations."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from tests.integration.answers import ok
from tests.integration.conftest import Gql

IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  summary { id } } }"""
DOC = """query($id: ID!) { document(scope: USER, id: $id) { chunks { id revision text } } }"""
UPDATE = """mutation($id: ID!, $t: String!, $r: Int!) { updateChunk(scope: USER, id: $id,
  text: $t, revision: $r) { id } }"""
FIND = """query($q: String!) { search(scope: USER, query: $q, sources: [DOCUMENTS]) {
  hits { id fulltextRank } } }"""
# Over 64 terms once stop words are out.
LONG = " ".join(f"step{i} configures gateway{i}" for i in range(30))


def found(gql: Gql, who: str, query: str) -> set[str]:
    """The chunks the full-text leg ranked for ``query``."""
    return {h["id"] for h in ok(gql(FIND, who, q=query))["search"]["hits"] if h["fulltextRank"]}


def test_a_short_turn_does_not_quote_a_long_message_beside_it(
    gql: Gql, token: Callable[..., str]
) -> None:
    who = token(f"nbh-{uuid.uuid4().hex[:8]}", "alice", "planner")
    turns = [
        "user: my quokkaberry jam burned again",
        f"assistant: zanzibarite answer. {LONG}",
        "user: thanks, the marmaladite worked",
        "assistant: glad the jam is fixed",
    ]
    doc = ok(gql(IMPORT, who, m="\n\n".join(turns) + "\n"))
    chunks = ok(gql(DOC, who, id=doc["importDocument"]["summary"]["id"]))["document"]["chunks"]
    ids = [c["id"] for c in chunks]
    # The long answer's word: only the answer holds it, not the short turns beside it.
    assert found(gql, who, "zanzibarite") == {ids[1]}
    # The long answer holds none of its short neighbours' words.
    assert found(gql, who, "quokkaberry") == {ids[0]}
    # Two short lines still quote each other (LoCoMo's chat lines keep their neighbourhood).
    assert found(gql, who, "marmaladite") == {ids[2], ids[3]}


def test_an_edit_that_makes_a_chunk_long_takes_it_out_of_its_neighbours(
    gql: Gql, token: Callable[..., str]
) -> None:
    who = token(f"nbh-e-{uuid.uuid4().hex[:8]}", "alice", "planner")
    doc = ok(gql(IMPORT, who, m="First plain line.\n\nSecond zanzibarite line.\n\nThird line.\n"))
    chunks = ok(gql(DOC, who, id=doc["importDocument"]["summary"]["id"]))["document"]["chunks"]
    assert found(gql, who, "zanzibarite") == {c["id"] for c in chunks}
    middle = chunks[1]
    ok(
        gql(
            UPDATE, who, id=middle["id"], t=f"Second zanzibarite line. {LONG}", r=middle["revision"]
        )
    )
    assert found(gql, who, "zanzibarite") == {middle["id"]}
    assert found(gql, who, "plain") == {chunks[0]["id"]}
