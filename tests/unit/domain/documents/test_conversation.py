"""Conversation documents, pure parts: turn text, ids, and the NEXT edges to redraw."""

from __future__ import annotations

import itertools
import random

from palimpsest.domain.documents import conversation as conv


def chain(existing: list[tuple[str, int]], added: list[tuple[str, int]]) -> list[str]:
    """Apply relink's answer to the edges of ``existing`` and read the chain back."""
    order = [i for i, _ in sorted(existing, key=lambda t: t[1])]
    edges = dict(itertools.pairwise(order))
    cut, draw = conv.relink(existing, added)
    for a, b in cut:
        assert edges.pop(a) == b
    for a, b in draw:
        assert a not in edges
        edges[a] = b
    heads = {i for i, _ in existing + added} - set(edges.values())
    assert len(heads) == 1
    out = [heads.pop()]
    while out[-1] in edges:
        out.append(edges[out[-1]])
    return out


def test_appending_draws_one_edge_per_turn_and_cuts_none() -> None:
    cut, draw = conv.relink([("a", 1), ("b", 2)], [("c", 3), ("d", 4)])
    assert cut == []
    assert draw == [["b", "c"], ["c", "d"]]


def test_a_late_turn_is_spliced_into_its_place() -> None:
    cut, draw = conv.relink([("a", 1), ("c", 3)], [("b", 2)])
    assert cut == [["a", "c"]]
    assert draw == [["a", "b"], ["b", "c"]]
    assert conv.relink([("b", 2)], [("a", 1)]) == ([], [["a", "b"]])


def test_any_arrival_order_yields_the_index_order() -> None:
    rng = random.Random(7)
    turns = [(f"t{i}", i * 10) for i in range(30)]
    for _ in range(50):
        arrived = turns[:]
        rng.shuffle(arrived)
        existing: list[tuple[str, int]] = []
        while arrived:
            n = rng.randint(1, 5)
            take, arrived = arrived[:n], arrived[n:]
            order = chain(existing, take)
            existing += take
            assert order == [i for i, _ in sorted(existing, key=lambda t: t[1])]


def test_turn_text_quotes_the_speaker_and_says_where_the_span_starts() -> None:
    text, start = conv.turn_text("Alice", "hello there")
    assert (text, start) == ("Alice: hello there", 7)
    assert text[start:] == "hello there"
    assert conv.turn_text(None, "x") == ("x", 0)


def test_one_document_per_session_and_scope() -> None:
    a = conv.document_id("k1", "s1")
    assert a == conv.document_id("k1", "s1")
    assert len({a, conv.document_id("k2", "s1"), conv.document_id("k1", "s2")}) == 3
    assert conv.document_id("k1", None) == conv.document_id("k1", "")
    assert conv.root_id(a) != a


def test_titles_and_paths_come_from_the_session() -> None:
    assert conv.title("trip") == "Conversation trip"
    assert conv.path("trip") == "/conversations/trip"
    assert conv.path("bad\nname") is None
    assert conv.path(None) is None
