"""The consolidator's records: frozen, and encoded to exactly the properties the statements set."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from palimpsest.identity.acting import HarvestedRun
from palimpsest.schema.turns import MentionRow, RunStamp, TurnRow

RUN = HarvestedRun(
    session_id="s1",
    run_id="r1",
    agent_name="agent",
    model="m",
    memory_scopes=None,
    sql_scopes=None,
    isolated=False,
)
STAMP = {
    "session_id": "s1",
    "run_id": "r1",
    "agent_name": "agent",
    "model": "m",
    "origin": "compaction",
    "compaction_generation": 3,
}


def turn() -> TurnRow:
    return TurnRow(
        id="a" * 32,
        type="turn",
        text="user: hello\nthere",
        separator="\n\n",
        position=7,
        end_line=2,
        embedding=[0.5, 0.25],
        observed_at=datetime(2026, 1, 2, tzinfo=UTC),
        speaker="user",
        role="user",
        source_id="m-1",
        stamp=RunStamp.of(RUN, 3),
    )


def test_the_run_stamp_is_the_runs_provenance_with_origin_compaction() -> None:
    assert RunStamp.of(RUN, 3).params() == STAMP
    assert RunStamp.of(RUN).params()["compaction_generation"] is None


def test_a_turn_row_encodes_every_chunk_property_written_by_set_x_equals_t() -> None:
    # WRITE_TURNS copies the whole map onto the chunk (``SET x = t``): the key set is the
    # chunk's property set, so it must not grow or shrink by accident.
    assert turn().params() == {
        "id": "a" * 32,
        "type": "turn",
        "text": "user: hello\nthere",
        "separator": "\n\n",
        "position": 7,
        "index": 7,
        "start_line": 0,
        "end_line": 2,
        "start_char": 0,
        "end_char": 17,
        "embedding": [0.5, 0.25],
        "observed_at": datetime(2026, 1, 2, tzinfo=UTC),
        "speaker": "user",
        "role": "user",
        "source_id": "m-1",
        **STAMP,
    }


def test_a_mention_row_encodes_the_edge_and_the_new_entitys_provenance() -> None:
    row = MentionRow("c" * 32, "person", "Ada", "ada", "e" * 32, 0, 3, RunStamp.of(RUN, 3))
    assert row.params() == {
        "chunk_id": "c" * 32,
        "type": "person",
        "name": "Ada",
        "norm": "ada",
        "entity_id": "e" * 32,
        "start": 0,
        "end": 3,
        **STAMP,
    }


def test_records_are_frozen_and_change_only_by_replace() -> None:
    row = turn()
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.position = 8  # type: ignore[misc]
    moved = dataclasses.replace(row, position=8)
    assert (row.params()["index"], moved.params()["index"]) == (7, 8)
