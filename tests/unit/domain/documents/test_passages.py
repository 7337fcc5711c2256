"""Passage windows (``domain/documents/passages.py``): a long text's windows past its head,
overlapping, cut at whitespace, bounded in number; a short text has none."""

from __future__ import annotations

import itertools

from palimpsest.domain.documents.passages import Window, text_of, windows

WORDS = " ".join(f"w{i}" for i in range(2000))  # 10,889 characters


def test_a_text_that_fits_in_one_window_has_no_passages() -> None:
    assert windows("short text", 1000, 200, 64) == []
    assert windows("x" * 1000, 1000, 200, 64) == []


def test_passages_cover_the_text_past_the_head_with_overlap() -> None:
    found = windows(WORDS, 1000, 200, 64)
    assert [w.seq for w in found] == list(range(1, len(found) + 1))
    assert found[-1].end == len(WORDS)
    head_end = 1000
    assert found[0].start < head_end  # overlaps the head the chunk's own vector reads
    for before, after in itertools.pairwise(found):
        assert after.start < before.end  # each overlaps the one before
        assert after.start - before.start >= 500  # at least half a window forward
    assert all(w.end - w.start <= 1000 for w in found)


def test_windows_are_cut_at_whitespace_so_no_word_is_split() -> None:
    for w in windows(WORDS, 1000, 200, 64):
        piece = text_of(WORDS, w)
        assert piece.startswith("w")
        assert WORDS[w.start - 1] == " "
        assert w.end == len(WORDS) or WORDS[w.end - 1] == " "


def test_a_text_without_whitespace_is_cut_where_it_falls() -> None:
    blob = "x" * 3000
    assert windows(blob, 1000, 200, 64)[:2] == [Window(1, 800, 1800), Window(2, 1600, 2600)]


def test_the_number_of_passages_is_bounded_and_zero_switches_them_off() -> None:
    huge = "word " * 40_000
    assert len(windows(huge, 1000, 200, 64)) == 64
    assert windows(huge, 1000, 200, 64)[-1].end < len(huge)
    assert windows(WORDS, 1000, 200, 0) == []


def test_an_overlap_as_large_as_the_window_still_moves_forward() -> None:
    found = windows(WORDS, 1000, 1000, 64)
    assert all(b.start - a.start >= 500 for a, b in itertools.pairwise(found))


def test_with_little_or_no_overlap_no_character_falls_between_two_windows() -> None:
    # Words of uneven length, so windows snap back at whitespace by different amounts.
    text = " ".join("w" * (1 + i % 13) for i in range(3000))
    for overlap in (0, 10, 50):
        found = windows(text, 1000, overlap, 1000)
        # The head window (the chunk's own vector) reads at most the first 1,000 characters
        # and ends at whitespace within its last tenth.
        assert found[0].start <= 1000
        for before, after in itertools.pairwise(found):
            assert after.start <= before.end, (overlap, before, after)
        assert found[-1].end == len(text)
