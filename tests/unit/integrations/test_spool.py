"""The local spool of spans the server has not taken (``integrations.spool``): kept on disk
with their generation, sent by generation on the next drain, emptied only once all is banked."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from palimpsest.client import Client, SpanInput
from palimpsest.errors import Forbidden
from palimpsest.integrations.banking import Banked
from palimpsest.integrations.spool import Spool
from tests.unit.integrations.harvest_server import HarvestServer

WHEN = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def test_kept_spans_read_back_with_their_generation(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "deep" / "spool.jsonl")
    assert spool.pending() == []
    spool.keep(
        [SpanInput(text="a", speaker="Ada", role="user", observed_at=WHEN, source_id="1")], 2
    )
    spool.keep([SpanInput(text="b")], 3)
    assert spool.pending() == [
        (
            2,
            SpanInput(
                text="a", speaker="Ada", role="user", observed_at=WHEN.isoformat(), source_id="1"
            ),
        ),
        (3, SpanInput(text="b")),
    ]


def test_a_drain_sends_by_generation_and_empties_the_spool(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool.jsonl")
    spool.keep([SpanInput(text="late", source_id="3")], 5)
    spool.keep([SpanInput(text="early", source_id="1"), SpanInput(text="early2", source_id="2")], 4)
    server = HarvestServer()
    with Client("http://s", "tok", http=server.client_http()) as client:
        assert spool.drain(client) == Banked(accepted=3)
        assert spool.drain(client) == Banked()  # nothing left, nothing sent
    assert [(g, [s["text"] for s in spans]) for g, spans in server.calls] == [
        (4, ["early", "early2"]),
        (5, ["late"]),
    ]
    assert not spool.path.exists()


def test_a_failed_drain_keeps_everything_for_the_next(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "spool.jsonl")
    spool.keep([SpanInput(text="a", source_id="1")], 1)
    spool.keep([SpanInput(text="b", source_id="2")], 2)
    server = HarvestServer(fail=1)
    with Client("http://s", "tok", http=server.client_http()) as client:
        with pytest.raises(Forbidden):
            spool.drain(client)
        assert len(spool.pending()) == 2
        assert spool.drain(client) == Banked(accepted=2)
    assert spool.pending() == []
