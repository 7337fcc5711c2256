"""The managed deployment the model-migration tests share (``test_reembed.py``,
``test_reembed_abort.py``): a private Neo4j, the ``palimpsest reembed`` runner, the documents
they send and the counts they read."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from neo4j import Driver, GraphDatabase

from palimpsest.config import Settings
from palimpsest.local import neo4j as neo4j_local
from tests.integration import backup_world as bw

SET = """mutation($k: String!, $v: JSON!) {
  memorySet(scope: USER, key: $k, value: $v, embed: true) { key } }"""
# The vector leg alone decides the order (full-text weight 0), so hits rank by cosine.
SEARCH = """query($q: String!) { search(scope: USER, query: $q, topK: 8,
  weights: {vector: 1, fulltext: 0}) { hits { key cosine vectorRank } } }"""
TOPICS = [
    "the quarterly budget review moved to Thursday",
    "my sister lives in Lisbon and teaches piano",
    "prefer tea over coffee in the afternoon",
    "the deploy pipeline fails when the cache is cold",
    "book flights to Oslo for the conference in May",
    "the dog needs its vaccination next week",
    "use tabs, not spaces, in the Go repository",
    "dinner with Priya on Saturday at the Thai place",
]
QUESTION = "when is the budget meeting"


def deployment(home: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """A private Neo4j that follows the database's embedding state every half second."""
    with bw.private_neo4j(tmp_path_factory.mktemp(home) / "home") as s:
        yield s.replace(embedding_follow_seconds=0.5)


def reembed(s: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        bw.command("reembed", *args), env=bw.env(s), capture_output=True, text=True, timeout=600
    )


def driver_of(s: Settings) -> Driver:
    return GraphDatabase.driver(
        s.bolt_uri, auth=neo4j_local.credentials(s), notifications_min_severity="OFF"
    )


def vectors(s: Settings) -> dict[str, int]:
    with driver_of(s) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (m:Memory) RETURN count(m.embedding) AS a, count(m.embedding_b) AS b"
        )
        return dict(records[0].data())


DOC = """# Greenhouse log

The tomatoes in the east bed need water every morning.

## Pests

Aphids came back to the peppers; ladybirds were released on Tuesday.
"""
FACT = """mutation { assertFacts(scope: USER, place: false, facts: [{subject: {type: "plant",
  name: "Aloe"}, predicate: "needs", objectValue: "full sun"}]) { created } }"""
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m)
  { summary { chunkCount } } }"""
