"""The fault suite's verdicts: half-written and lost batches are counted, nothing else."""

from __future__ import annotations

from palimpsest_suites.faults import SIZES, Batch, Tally, judge


def test_judge_counts_partial_and_lost_batches() -> None:
    tally = Tally()
    present = {
        "whole-acked": SIZES["facts"],
        "absent-unacked": 0,
        "whole-unacked": SIZES["facts"],  # committed, reply lost: fine
        "partial": 3,
        "absent-acked": 0,
    }
    acked = {"whole-acked", "absent-acked"}
    tally.batches = [Batch("facts", m, m in acked) for m in present]
    judge(tally, lambda b: present[b.marker])
    assert tally.half_written == 1
    assert tally.lost == 1
    assert any("partial" in n for n in tally.notes)
    assert any("absent-acked" in n for n in tally.notes)
