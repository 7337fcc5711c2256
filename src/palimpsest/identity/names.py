"""What a user id is: the one rule for the token's ``user`` claim and for an admin naming one.

A user id is compared exactly as written: case, spacing inside and Unicode form all count, so
``EV1`` and ``ev1`` are two users. Because token verification refuses every id this rule
refuses, an id it refuses can name nobody, and an admin naming one is told so instead of
getting a receipt for an erasure of nothing.
"""

from __future__ import annotations

import unicodedata

MAX_USER_ID = 256
# Controls (NUL, the 0x1f scope-key separator, newlines), format characters (zero-width
# space and joiners, BOM, bidi marks), surrogates, and line and paragraph separators: none
# is visible, so an id holding one looks like another id.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def user_id_fault(value: str) -> str | None:
    """Why ``value`` cannot be a user id, or None when it can."""
    if not value:
        return "must not be empty"
    if len(value) > MAX_USER_ID:
        return f"must be at most {MAX_USER_ID} characters"
    if value != value.strip():
        return "must not start or end with white space"
    if any(unicodedata.category(c) in _REFUSED_CATEGORIES for c in value):
        return "must not hold control, format or invisible separator characters"
    return None
