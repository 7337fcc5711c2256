"""Where a mention lies once its chunk's text changes (mention_places.follow)."""

from __future__ import annotations

import pytest

from palimpsest.domain.documents.mention_places import follow

OLD = "Ada Lovelace met Bob Smith."


def place(old: str, new: str, name: str, nth: int = 0) -> tuple[int, int] | None:
    start = -1
    for _ in range(nth + 1):
        start = old.index(name, start + 1)
    found = follow(old, new, start, start + len(name))
    if found is not None:
        assert new[found[0] : found[1]] == name  # it marks the same text
    return found


def test_text_before_the_edit_keeps_its_place_and_text_after_it_shifts() -> None:
    new = "Ada Lovelace, the countess, met Bob Smith."
    assert place(OLD, new, "Ada Lovelace") == (0, 12)
    assert place(OLD, new, "Bob Smith") == (32, 41)


def test_a_marked_text_the_edit_removed_is_gone() -> None:
    assert place(OLD, "Grace met Bob Smith.", "Ada Lovelace") is None
    assert place(OLD, "Ada Lovelace met Robert Smith.", "Bob Smith") is None
    # Exact text: another case is another text.
    assert place(OLD, "ada lovelace met Bob Smith.", "Ada Lovelace") is None


def test_a_text_the_edit_touched_is_found_again_nearest_its_old_place() -> None:
    old = "Bob called. Later Bob left."
    new = "Bob phoned. Later, Bob left!"
    assert place(old, new, "Bob", nth=0) == (0, 3)
    assert place(old, new, "Bob", nth=1) == (19, 22)
    # Moved across the edit: found where it went.
    assert place(OLD, "Bob Smith met Ada Lovelace.", "Bob Smith") == (0, 9)
    assert place(OLD, "Bob Smith met Ada Lovelace.", "Ada Lovelace") == (14, 26)


def test_a_mention_never_follows_into_a_longer_word() -> None:
    old = "Ada went home."
    assert place(old, "Adam went home.", "Ada") is None
    assert place(old, "Adam went home with Ada.", "Ada") == (20, 23)
    assert place(old, "Ada's dog went home.", "Ada") == (0, 3)
    # A span that ends on punctuation only needs a boundary where it meets a word character.
    assert follow("He said: hi.", "So he said: hi.", 3, 9) == (6, 12)


@pytest.mark.parametrize("span", [(5, 5), (9, 3), (-1, 3), (20, 40)])
def test_offsets_that_mark_no_text_are_kept_as_they_are(span: tuple[int, int]) -> None:
    assert follow("short text", "other text", *span) == span


def test_an_unchanged_text_keeps_every_place() -> None:
    assert follow(OLD, OLD, 17, 26) == (17, 26)
