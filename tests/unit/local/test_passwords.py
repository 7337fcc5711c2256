"""Generated passwords never look like a command-line option."""

from __future__ import annotations

import string

from palimpsest.local.passwords import LENGTH, generated_password


def test_no_generated_password_can_be_read_as_an_option() -> None:
    drawn = [generated_password() for _ in range(20_000)]
    allowed = set(string.ascii_letters + string.digits)
    assert all(len(p) == LENGTH and set(p) <= allowed for p in drawn)
    assert not any(p.startswith("-") for p in drawn)
    assert len(set(drawn)) == len(drawn)
