"""Near-duplicates, the pure half: folding names, cosines, the threshold's bounds."""

from __future__ import annotations

import pytest

from palimpsest.domain.ranking import dedup
from palimpsest.errors import InvalidArgument


def test_fold_ignores_case_punctuation_and_whitespace_only() -> None:
    assert dedup.fold("Acme, Inc.") == dedup.fold("  acme   INC ")
    assert dedup.fold("under-16") != dedup.fold("under-17")
    assert dedup.fold("São Paulo") != dedup.fold("Sao Paulo")  # letters are kept as written


def test_cosine_and_the_rounding_allowance() -> None:
    assert dedup.cosine([1.0, 0.0], [0.0, 1.0]) == 0.0
    assert dedup.close_enough(dedup.cosine([0.1, 0.7], [0.1, 0.7]), 1.0)
    assert not dedup.close_enough(0.99, 1.0)
    assert not dedup.close_enough(None, 0.5)


@pytest.mark.parametrize("bad", [0.0, -1.0, 1.01, float("nan"), float("inf")])
def test_a_threshold_outside_zero_to_one_is_refused(bad: float) -> None:
    with pytest.raises(InvalidArgument):
        dedup.check_threshold(bad)


def test_no_threshold_is_off() -> None:
    assert dedup.check_threshold(None) is None
    assert dedup.check_threshold(1.0) == 1.0
