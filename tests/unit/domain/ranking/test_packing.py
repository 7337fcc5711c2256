"""Packing cited pieces into a token budget (``domain.ranking.packing``): whole pieces in order,
else their first whole sentences, else nothing; the block's own count is what it reports."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from palimpsest.domain.ranking.packing import Piece, pack, sentences


def words(texts: Sequence[str]) -> list[int]:
    """One token per word: easy to reason about in a test."""
    return [len(t.split()) for t in texts]


NOTE = Piece("[note:a]", "One two three. Four five six. Seven eight nine.")
FACT = Piece("[fact:f1]", "Ada works at the mill.")
HIT = Piece("[chunk:c1]", "A long chunk of text that goes on and on without a stop")


def test_sentences_end_at_a_full_stop_or_a_line_break_never_inside_one() -> None:
    assert sentences("One. Two! Three? Four") == [
        "One.",
        "One. Two!",
        "One. Two! Three?",
        "One. Two! Three? Four",
    ]
    assert sentences("A list:\n- one\n- two") == ["A list:\n- one", "A list:\n- one\n- two"]
    assert sentences('She said "stop." Then left.') == [
        'She said "stop."',
        'She said "stop." Then left.',
    ]
    assert sentences("e.g.no space") == ["e.g.no space"]
    assert sentences("no stop at all") == ["no stop at all"]


def test_whole_pieces_in_order_when_all_fit() -> None:
    block = pack([NOTE, FACT, HIT], 1000, words)
    assert not block.truncated
    assert block.text.split("\n") == [
        "[note:a] One two three. Four five six. Seven eight nine.",
        "[fact:f1] Ada works at the mill.",
        "[chunk:c1] A long chunk of text that goes on and on without a stop",
    ]
    assert [p.index for p in block.packed] == [0, 1, 2]
    assert block.tokens == words([block.text])[0] == sum(p.tokens for p in block.packed)


@pytest.mark.parametrize("budget", range(40))
def test_the_block_never_exceeds_the_budget_nor_cuts_a_sentence(budget: int) -> None:
    block = pack([NOTE, FACT, HIT], budget, words)
    assert block.tokens <= budget
    assert block.tokens == (words([block.text])[0] if block.text else 0)
    whole = {p.cite: p.body for p in (NOTE, FACT, HIT)}
    for packed in block.packed:
        cite, _, body = packed.line.partition(" ")
        assert body in sentences(whole[cite])
        assert packed.cut == (body != whole[cite])
    assert block.truncated == (len(block.packed) < 3 or any(p.cut for p in block.packed))


def test_a_piece_too_big_is_cut_at_its_last_fitting_sentence_and_later_ones_still_come() -> None:
    block = pack([NOTE, FACT], 8, words)  # [note:a] and two sentences (7); the fact (6) not
    assert block.text == "[note:a] One two three. Four five six."
    assert block.packed[0].cut
    assert block.truncated
    # A piece with no sentence that fits is left out; a smaller one after it still fits.
    block = pack([HIT, FACT], 7, words)
    assert block.text == "[fact:f1] Ada works at the mill."
    assert [p.index for p in block.packed] == [1]
    assert block.truncated


def test_a_tokenizer_that_does_not_add_up_loses_pieces_from_the_end() -> None:
    def joined_costs_more(texts: Sequence[str]) -> list[int]:
        return [len(t.split()) + 5 * t.count("\n") for t in texts]

    block = pack([FACT, FACT, FACT], 3 * 6, joined_costs_more)
    assert block.tokens <= 18
    assert block.tokens == joined_costs_more([block.text])[0]
    assert block.truncated
    assert len(block.packed) < 3


def test_an_empty_budget_packs_nothing() -> None:
    block = pack([FACT], 1, words)
    assert (block.text, block.tokens, block.truncated, block.packed) == ("", 0, True, ())


def test_a_piece_with_line_breaks_stays_one_line_escaped() -> None:
    body = "# Manual\n\n- step one\r\n- step two\u2028C:\\temp\\new\x85end"
    block = pack([Piece("[chunk:c1]", body), FACT], 1000, words)
    assert block.text.splitlines() == [p.line for p in block.packed]
    assert block.packed[0].line == (
        "[chunk:c1] # Manual\\n\\n- step one\\r\\n- step two\\u2028C:\\\\temp\\\\new\\u0085end"
    )
    # A cut piece is escaped the same way: its first sentences, on one line.
    cut = pack([Piece("[note:a]", "First line.\nSecond line goes on.")], 3, words)
    assert cut.text == "[note:a] First line."
    two = pack([Piece("[note:a]", "A list:\n- one\n- two and more")], 5, words)
    assert two.text == "[note:a] A list:\\n- one"
