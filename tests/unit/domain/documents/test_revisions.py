"""The pure revision planner: spans derived from order, and what a revision writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.domain.documents import markdown
from palimpsest.domain.documents import revisions as rev

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "markdown"


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.md")))
def test_derived_spans_are_the_parsed_spans(name: str) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    for variant in (text, text.replace("\n", "\r\n")):
        parsed = markdown.parse(variant)
        derived = rev.spans(parsed.preamble, [(c.text, c.separator) for c in parsed.chunks])
        want = [rev.Span(c.start_line, c.end_line, c.start_char, c.end_char) for c in parsed.chunks]
        assert derived == want


def targets(text: str) -> list[rev.Target]:
    return [
        rev.Target(rev.Content(c.type.value, c.text, c.separator, c.level, c.language), c.parent)
        for c in markdown.parse(text).chunks
    ]


def current_of(plan: rev.Plan, wanted: list[rev.Target]) -> list[rev.Current]:
    return [
        rev.Current(p.id, t.content, p.parent_id, p.seq)
        for p, t in zip(plan.chunks, wanted, strict=True)
    ]


def test_a_reimport_keeps_unchanged_chunks_and_edits_in_place() -> None:
    one = targets("# T\n\nfirst\n\nsecond\n\nthird\n")
    first = rev.plan([], one, [f"id{i}" for i in range(10)])
    assert [p.action for p in first.chunks] == ["create"] * 4
    two = targets("# T\n\nfirst\n\nnew one\n\nsecond, edited\n\nthird\n")
    second = rev.plan(current_of(first, one), two, [f"new{i}" for i in range(10)])
    actions = {p.id: p.action for p in second.chunks}
    assert actions == {"id0": "keep", "id1": "keep", "new0": "create", "id2": "edit", "id3": "keep"}
    assert second.closed == []
    assert second.changed == 2
    seqs = [p.seq for p in second.chunks]
    assert seqs == sorted(seqs)
    assert len(set(seqs)) == len(seqs)
    # The kept chunks kept their order keys: earlier revisions read in the same order.
    assert {p.id: p.seq for p in second.chunks if p.action == "keep"} == {
        p.id: p.seq for p in first.chunks if p.id in {"id0", "id1", "id3"}
    }


def test_a_full_gap_numbers_afresh_and_edits_what_moved() -> None:
    one = targets("a\n\nb\n")
    current = [rev.Current(f"c{i}", t.content, None, i + 1) for i, t in enumerate(one)]
    two = targets("a\n\nx\n\nb\n")
    plan = rev.plan(current, two, ["n0", "n1", "n2"])
    assert [p.seq for p in plan.chunks] == [rev.SEQ_GAP, 2 * rev.SEQ_GAP, 3 * rev.SEQ_GAP]
    assert [p.action for p in plan.chunks] == ["edit", "create", "edit"]


def test_the_diff_marks_a_missing_final_newline() -> None:
    out = rev.unified_diff("a\nb", "a\nc", "revision 1", "revision 2")
    assert out.endswith("+c\n\\ No newline at end of file\n")
    assert rev.unified_diff("same\n", "same\n", "x", "y") == ""
