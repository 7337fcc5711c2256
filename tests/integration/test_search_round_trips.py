"""How many statements a ``search`` and a fact write send, on the procedure engine (issue 43
item 2): a search of one scope is one statement (``recall_one.SEARCH_ONE``), plus the final
load when facts are among its hits (what a hit shows of a fact is read only then); with the
one statement off it is the statistics, each kind's legs and their cue reads, and the load.
Each statement of a read is one round trip (auto-commit, RUN and PULL sent together). The
newer-first lever (on by default) adds its own read of the chunk hits (``CHUNK_TOLD``) when two
are among them: counted apart, it is the lever's, with the one statement or without.

Run with ``-s`` to print the counts (docs/notes/search-latency.md records them).
"""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Callable

import pytest

from palimpsest.resolvers.recall import one
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.test_recall_isolation import ASSERT, GUESS, LADDER, SEARCH, plant_ladder

FACT = {"subject": {"type": "thing", "name": "a tree"}, "predicate": "says", "objectValue": "oak"}
# Newer first's read of the chunk hits (resolvers/recall/newer.py): not the search's own.
LEVER = "CHUNK_TOLD"
DOCUMENTS = """query($q: String!) { search(scope: USER, query: $q, topK: 10,
  sources: [DOCUMENTS, NOTES]) { hits { kind id text score } } }"""


def test_a_search_is_one_statement_and_answers_as_the_legs_do(
    gql: Gql, token: Callable[..., str], ran: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    who = token(f"trips-{uuid.uuid4().hex[:8]}", "alice", "planner")
    plant_ladder(gql, who)
    counts: dict[str, Counter[str]] = {}
    for query, document in [
        (f"{GUESS} " + " ".join(LADDER) + " fence", SEARCH),
        (f"{LADDER[2]} number", DOCUMENTS),
    ]:
        answers = {}
        for enabled in (True, False):
            monkeypatch.setattr(one, "ENABLED", enabled)
            ok(gql(document, who, q=query))  # the speakers' hint is now the scope's
            ran.clear()
            answers[enabled] = ok(gql(document, who, q=query))["search"]["hits"]
            seen = Counter(ran)
            assert seen.pop(LEVER, 0) <= 1
            counts[f"{'one' if enabled else 'legs'} {document is SEARCH}"] = seen
        assert json.dumps(answers[True], sort_keys=True) == json.dumps(
            answers[False], sort_keys=True
        )
    # Every kind: the one statement, and the final load for the facts among the hits.
    assert counts["one True"] == Counter({"SEARCH_ONE": 1, "LOAD_HITS": 1})
    # Notes and chunks: what a hit shows came with the legs.
    assert counts["one False"] == Counter({"SEARCH_ONE": 1})
    assert counts["legs True"].total() > counts["one True"].total()
    ran.clear()
    ok(gql(ASSERT, who, facts=[FACT]))
    counts["fact write"] = Counter(ran)
    for name, seen in counts.items():
        print(f"{name}: {seen.total()} statements {dict(seen)}")
