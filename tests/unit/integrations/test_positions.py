"""Positions: a message's place in the run, so equal words later are a span of their own and
one message sent twice (sync, then compression) is one."""

from __future__ import annotations

from palimpsest.integrations.positions import Positions, key


def test_turns_are_numbered_in_order_and_equal_words_differ() -> None:
    p = Positions()
    assert p.turn([("user", "Book it?"), ("assistant", "Yes.")]) == ["0", "1"]
    assert p.turn([("user", "And Friday?"), ("assistant", "Yes.")]) == ["2", "3"]
    assert key("s", "1", "assistant", "Yes.") != key("s", "3", "assistant", "Yes.")


def test_a_compression_takes_the_synced_places_and_places_the_rest() -> None:
    p = Positions()
    p.turn([("user", "Book it?"), ("assistant", "Yes.")])
    p.turn([("user", "And Friday?"), ("assistant", "Yes.")])
    history = [
        ("user", "Book it?"),
        ("assistant", "[tool call calendar] {}"),
        ("tool", "booked"),
        ("assistant", "Yes."),
        ("user", "And Friday?"),
        ("assistant", "Yes."),
    ]
    assert p.compressed(history) == ["0", "0.1", "0.2", "1", "2", "3"]
    # A later compression of a rewritten history (a summary first) finds the same places.
    later = [("user", "[summary] booked"), *history[3:], ("user", "Thanks"), ("assistant", "Yes.")]
    assert p.compressed(later) == ["start.1", "1", "2", "3", "3.1", "3.2"]


def test_a_turn_synced_after_its_compression_takes_the_places_it_got_there() -> None:
    p = Positions()
    p.turn([("user", "Book it?"), ("assistant", "Yes.")])
    placed = p.compressed(
        [("user", "Book it?"), ("assistant", "Yes."), ("user", "Friday?"), ("assistant", "Yes.")]
    )
    assert placed == ["0", "1", "1.1", "1.2"]
    assert p.turn([("user", "Friday?"), ("assistant", "Yes.")]) == ["1.1", "1.2"]
    assert p.turn([("user", "Monday?"), ("assistant", "Yes.")]) == ["2", "3"]
