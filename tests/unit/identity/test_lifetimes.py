"""A minted token's lifetime, in words a person reads once."""

from __future__ import annotations

import pytest

from palimpsest.identity.lifetimes import DEFAULT_TTL_SECONDS, MAX_MINTED_TTL_SECONDS, lifetime

NOON = 1_796_385_600  # 2026-12-04 12:00:00 UTC


@pytest.mark.parametrize(
    ("seconds", "words"),
    [
        (DEFAULT_TTL_SECONDS, "1 hour"),
        (30 * 86400, "30 days"),
        (MAX_MINTED_TTL_SECONDS, "90 days"),
        (5400, "90 minutes"),
        (1, "1 second"),
        (3601, "3601 seconds"),
    ],
)
def test_the_largest_whole_unit(seconds: int, words: str) -> None:
    assert lifetime(seconds, NOON) == f"{words}, until 2026-12-04 12:00:00 UTC"
