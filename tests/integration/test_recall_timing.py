"""Recall stage timing on the real server: every stage a search runs is observed once, as a
Prometheus histogram on the metrics listener and to in-process listeners; requests that run
no recall add nothing; no figure carries the query."""

from __future__ import annotations

import re
import socket
import uuid
from collections.abc import Callable, Iterator

import httpx
import pytest

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.resolvers.recall import one, timing
from palimpsest.server import serve_in_thread
from tests.integration.conftest import gql_over

IMPORT = """mutation($m: String!) {
  importDocument(scope: USER, markdown: $m) { summary { id } } }"""
SET = """mutation($k: String!, $v: JSON!) { memorySet(scope: USER, key: $k, value: $v,
  embed: true) { key } }"""
SEARCH = """query($q: String!) { search(scope: USER, query: $q, topK: 5) { hits { id } } }"""
# One search, one scope, all three kinds with rows of each: every leg runs.
LEG_STAGES = {f"{leg}_{kind}" for leg in ("vector", "fulltext") for kind in ("notes", "documents")}
PER_SEARCH = {"stats", "embedding", "legs", "fusion", "load", "resolver", "http_graphql"}


@pytest.fixture(scope="module")
def metered(settings: Settings) -> Iterator[tuple[httpx.Client, str]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    with (
        serve_in_thread(settings.replace(metrics_port=port)) as url,
        httpx.Client(base_url=url, timeout=30) as client,
    ):
        yield client, f"http://127.0.0.1:{port}/metrics"


def stage_counts(metrics_url: str) -> dict[str, float]:
    text = httpx.get(metrics_url).text
    found = re.findall(r'palimpsest_recall_stage_seconds_count\{stage="(\w+)"\} (\S+)', text)
    return {stage: float(n) for stage, n in found}


def test_a_search_observes_each_stage_once(
    metered: tuple[httpx.Client, str], token: Callable[..., str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The two sessions' stages (the one-statement search off: the test below has its own)."""
    monkeypatch.setattr(one, "ENABLED", False)
    client, metrics_url = metered
    gql = gql_over(client)
    who = token(f"rt-{uuid.uuid4().hex[:8]}", "alice", "timer", memory_scopes=[Scope.USER])
    assert "errors" not in gql(IMPORT, who, m="The harbor crane lifted cargo in Lisbon.\n")
    assert "errors" not in gql(SET, who, k="cargo", v="cargo manifests are kept in the harbor")
    before = stage_counts(metrics_url)
    seen: list[tuple[str, float]] = []
    with timing.listening(lambda stage, seconds: seen.append((stage, seconds))):
        body = gql(SEARCH, who, q="harbor cargo")
    assert body["data"]["search"]["hits"], body
    stages = [stage for stage, _ in seen]
    assert set(stages) >= PER_SEARCH | LEG_STAGES
    # No facts in the scope: the facts' full-text leg has nothing to read and does not run.
    assert "fulltext_facts" not in stages
    for stage in PER_SEARCH | LEG_STAGES:
        assert stages.count(stage) == 1, stage
    figures = dict(seen)
    assert all(0 < s < 60 for s in figures.values())
    # The resolver's time holds every stage. The embedding waits for the statistics (the
    # speakers leave the embedded text) and overlaps the full-text legs; the final load
    # follows fusion, which follows every leg.
    assert all(figures[stage] <= figures["resolver"] for stage in PER_SEARCH - {"http_graphql"})
    assert all(figures[stage] <= figures["legs"] for stage in LEG_STAGES)
    after_legs = figures["fusion"] + figures["load"]
    assert figures["stats"] + figures["embedding"] + after_legs <= figures["resolver"]
    after = stage_counts(metrics_url)
    for stage in set(stages):
        assert after[stage] - before.get(stage, 0.0) == stages.count(stage), stage


def test_a_search_in_one_statement_observes_its_stages_once(
    metered: tuple[httpx.Client, str], token: Callable[..., str]
) -> None:
    """On the procedure engine (the suite's Neo4j has the extension): the one statement
    (``one``) after the embedding, then fusion and the load; no statistics read of their own,
    and no full-text leg reads after the statement on a scope this small."""
    client, _ = metered
    gql = gql_over(client)
    who = token(f"rt-{uuid.uuid4().hex[:8]}", "alice", "timer", memory_scopes=[Scope.USER])
    assert "errors" not in gql(IMPORT, who, m="The harbor crane lifted cargo in Lisbon.\n")
    assert "errors" not in gql(SET, who, k="cargo", v="cargo manifests are kept in the harbor")
    seen: list[tuple[str, float]] = []
    with timing.listening(lambda stage, seconds: seen.append((stage, seconds))):
        body = gql(SEARCH, who, q="harbor cargo")
    assert body["data"]["search"]["hits"], body
    stages = [stage for stage, _ in seen]
    for stage in ("one", "embedding", "fusion", "load", "resolver", "http_graphql"):
        assert stages.count(stage) == 1, stage
    assert "stats" not in stages
    assert not [s for s in stages if s.startswith("fulltext_")]
    figures = dict(seen)
    once = figures["embedding"] + figures["one"] + figures["fusion"] + figures["load"]
    assert once <= figures["resolver"]


def test_requests_without_a_recall_observe_nothing(metered: tuple[httpx.Client, str]) -> None:
    client, _ = metered
    seen: list[str] = []
    with timing.listening(lambda stage, seconds: seen.append(stage)):
        assert client.post("/graphql", json={"query": "{ health }"}).status_code == 200
    assert seen == []


def test_only_known_stages_are_observed() -> None:
    with pytest.raises(ValueError, match="unknown recall stage"):
        timing.observe("the query text", 0.001)
