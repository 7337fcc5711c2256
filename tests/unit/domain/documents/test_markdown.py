from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.domain.documents import markdown
from palimpsest.domain.documents.markdown import ChunkType, ParsedDocument, export, parse
from palimpsest.errors import InvalidArgument

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "markdown"


def _fixture(name: str) -> str:
    # Bytes, not text mode: text mode would turn CRLF into LF behind our back.
    return (FIXTURES / name).read_bytes().decode("utf-8")


def _documents() -> dict[str, str]:
    docs = {path.name: _fixture(path.name) for path in sorted(FIXTURES.glob("*.md"))}
    docs["readme-crlf"] = docs["readme.md"].replace("\n", "\r\n")
    docs["design-note-cr"] = docs["design-note.md"].replace("\n", "\r")
    docs["changelog-no-final-newline"] = docs["changelog.md"].rstrip("\n")
    docs["lists-trailing-blanks"] = docs["lists.md"] + "\n  \n\t\n"
    docs["mixed-newlines"] = "# A\r\n\r\npara\rnext\n\n- x\r\n  - y\n"
    docs["trailing-spaces"] = "# Title   \n\ntext with two trailing spaces  \nhard break\n   \n"
    docs["empty"] = ""
    docs["blank-lines-only"] = "\n\n  \n\t\n"
    docs["single-word"] = "word"
    docs["form-feed-and-nbsp"] = "a\n\x0c\n\xa0\nb\u2028c\x85d\n"
    return docs


DOCUMENTS = _documents()


def _line_starts(text: str) -> list[int]:
    """An independent line table: lines end at CRLF, CR or LF, never at \\x85 or \\u2028."""
    starts = [0]
    i = 0
    while i < len(text):
        if text[i] == "\r" and text[i + 1 : i + 2] == "\n":
            i += 2
            starts.append(i)
            continue
        if text[i] in "\r\n":
            starts.append(i + 1)
        i += 1
    if starts[-1] != len(text):
        starts.append(len(text))
    return starts


def _check(text: str, doc: ParsedDocument) -> None:
    """Every invariant parse() promises, for any input."""
    assert doc.preamble + "".join(c.text + c.separator for c in doc.chunks) == text
    assert doc.export() == text
    assert export(doc.preamble, [(c.text, c.separator) for c in doc.chunks]) == text
    assert not doc.preamble.strip(" \t\r\n") or not doc.chunks
    starts = _line_starts(text)
    offset = len(doc.preamble)
    children: dict[int | None, list[int]] = {}
    for i, chunk in enumerate(doc.chunks):
        assert chunk.index == i
        assert chunk.start_char == offset
        assert chunk.text == text[chunk.start_char : chunk.end_char] != ""
        assert chunk.start_line < chunk.end_line
        assert starts[chunk.start_line] == chunk.start_char
        assert starts[chunk.end_line] == chunk.end_char
        assert not chunk.separator.strip(" \t\r\n")
        offset = chunk.end_char + len(chunk.separator)
        assert chunk.parent is None or 0 <= chunk.parent < i
        children.setdefault(chunk.parent, []).append(chunk.position)
        assert (chunk.level is not None) == (chunk.type is ChunkType.HEADING)
        assert chunk.level is None or 1 <= chunk.level <= 6
        assert chunk.language is None or chunk.type is ChunkType.CODE
        if chunk.parent is not None:
            assert doc.chunks[chunk.parent].type in (ChunkType.HEADING, ChunkType.LIST_ITEM)
    assert offset == len(text)
    for positions in children.values():
        assert positions == list(range(len(positions)))


def _outline(doc: ParsedDocument) -> list[tuple[str, str, str | None]]:
    """(type, first line of text, first line of parent) for readable expectations."""

    def first(i: int | None) -> str | None:
        return None if i is None else doc.chunks[i].text.splitlines()[0].strip()

    return [(c.type.value, first(c.index) or "", first(c.parent)) for c in doc.chunks]


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_round_trip_and_spans(name: str) -> None:
    text = DOCUMENTS[name]
    _check(text, parse(text))


def test_empty_and_blank_documents_have_no_chunks() -> None:
    for text in ("", "\n\n  \n\t\n", "\r\n\r\n"):
        doc = parse(text)
        assert doc == ParsedDocument(title=None, preamble=text, chunks=())


def test_readme_heading_tree() -> None:
    doc = parse(DOCUMENTS["readme.md"])
    assert doc.title == "Tidewater"
    assert doc.preamble == ""
    headings = [(c.level, c.text.strip(), c.parent) for c in doc.chunks if c.type == "heading"]
    by_text = {c.text.strip(): c.index for c in doc.chunks}
    assert headings == [
        (1, "# Tidewater", None),
        (2, "## Installation", by_text["# Tidewater"]),
        (2, "## Usage", by_text["# Tidewater"]),
        (3, "### Configuration", by_text["## Usage"]),
        (2, "## Contributing", by_text["# Tidewater"]),
        (2, "## Licence", by_text["# Tidewater"]),
    ]
    outline = _outline(doc)
    assert ("code", "```bash", "## Installation") in outline
    assert ("table", "| Key            | Default | Meaning                              |",
            "### Configuration") in outline  # fmt: skip
    # The fenced block inside item 3 is a child of that item, not of the section.
    assert ("code", "```console", "3. Ask for the next high water:") in outline
    assert ("list_item", "4. Done.", "## Usage") in outline
    usage_items = [
        c for c in doc.chunks if c.type == "list_item" and outline[c.index][2] == "## Usage"
    ]
    assert [c.position for c in usage_items] == [0, 1, 2, 3]


def test_three_deep_lists_nest_items_under_items() -> None:
    doc = parse(DOCUMENTS["lists.md"])
    outline = _outline(doc)
    expected_prefix = [
        ("heading", "# Lists", None),
        ("paragraph", "Tight, three deep:", "# Lists"),
        ("list_item", "- fruit", "# Lists"),
        ("list_item", "- apples", "- fruit"),
        ("list_item", "- cox", "- apples"),
        ("list_item", "- bramley", "- apples"),
        ("list_item", "- pears", "- fruit"),
        ("list_item", "- vegetables", "# Lists"),
        ("list_item", "1. roots", "- vegetables"),
        ("list_item", "1. carrots", "1. roots"),
        ("list_item", "2. beets", "1. roots"),
        ("list_item", "2. greens", "- vegetables"),
        ("paragraph", "Loose:", "# Lists"),
    ]
    assert outline[: len(expected_prefix)] == expected_prefix
    # A tight item owns exactly its own line; the blank line after a list is a separator.
    cox = doc.chunks[4]
    assert (cox.text, cox.separator, cox.start_line, cox.end_line) == ("    - cox\n", "", 6, 7)
    assert doc.chunks[11].separator == "\n"


def test_loose_list_items_keep_only_their_first_paragraph() -> None:
    doc = parse(DOCUMENTS["lists.md"])
    outline = _outline(doc)
    first = next(c for c in doc.chunks if c.text.startswith("1. First item"))
    assert first.text == "1. First item, first paragraph.\n"
    assert first.separator == "\n"
    kids = [outline[c.index][:2] for c in doc.chunks if c.parent == first.index]
    assert kids == [
        ("paragraph", "First item, second paragraph, which is a child of the item."),
        ("code", "```text"),
    ]
    assert ("quote", "> a quote inside an item", "2. Second item.") in outline
    # A new delimiter starts a new list; a lazy line stays with its item.
    assert ("list_item", "3) Third item uses a different delimiter, so it starts a new list.",
            "# Lists") in outline  # fmt: skip
    another = next(c for c in doc.chunks if c.text.startswith("+ another"))
    assert another.text == "+ another\n   continuation line (lazy)\n"
    empty = [c for c in doc.chunks if c.text == "-\n"]
    assert len(empty) == 1
    assert empty[0].type is ChunkType.LIST_ITEM


def test_changelog_nested_lists_and_definitions() -> None:
    doc = parse(DOCUMENTS["changelog.md"])
    outline = _outline(doc)
    assert doc.title == "Changelog"
    assert [o[:2] for o in outline if o[0] == "definition"] == [
        ("definition", "[kac]: https://keepachangelog.com/en/1.1.0/"),
        ("definition", "[semver]: https://semver.org/"),
    ]
    assert (
        "list_item",
        "- Even at the end of the file.",
        "- Keeps trailing blank lines.",
    ) in outline
    assert ("list_item", "1. Character offsets come from a line-start table.",
            "2. Inline tokens have no map.") in outline  # fmt: skip
    assert ("paragraph", "it waits 1 s, then 4 s, then 16 s.",
            "- The `sync` command retries three times:") in outline  # fmt: skip
    h3 = [(o[1], o[2]) for o in outline if o[0] == "heading" and o[1].startswith("###")]
    assert h3 == [
        ("### Added", "## [Unreleased]"),
        ("### Fixed", "## [Unreleased]"),
        ("### Changed", "## [2.1.0] - 2026-03-14"),
        ("### Removed", "## [2.1.0] - 2026-03-14"),
    ]
    assert outline[-1] == ("list_item", "2. Dropped Python 3.9.", "## [2.0.0] - 2025-11-02")


def test_design_note_setext_code_and_quotes() -> None:
    doc = parse(DOCUMENTS["design-note.md"])
    assert doc.title == "Design note: chunk spans"
    first, context = doc.chunks[0], doc.chunks[2]
    assert first.text == "Design note: chunk spans\n========================\n"
    assert (first.level, first.start_line, first.end_line) == (1, 0, 2)
    assert (context.text, context.level, context.parent) == ("Context\n-------\n", 2, 0)
    code = [c for c in doc.chunks if c.type is ChunkType.CODE]
    assert [c.language for c in code] == ["python", "js", None, None, "markdown"]
    assert code[3].text == "    $ make check\n    ok\n"
    assert code[4].text == '````markdown\n```python\nprint("inner")\n```\n````\n'
    quotes = [c for c in doc.chunks if c.type is ChunkType.QUOTE]
    assert len(quotes) == 1
    assert quotes[0].text.count("\n") == 4
    assert "> > Nested quote" in quotes[0].text
    assert [c.type for c in doc.chunks[-2:]] == [ChunkType.THEMATIC_BREAK, ChunkType.PARAGRAPH]


def test_html_blocks_and_thematic_breaks() -> None:
    doc = parse(DOCUMENTS["html-and-breaks.md"])
    assert doc.title == "Release checklist"
    kinds = [c.type.value for c in doc.chunks]
    assert kinds == [
        "html",
        "heading",
        "html",  # <details><summary>: an html block ends at the blank line
        "paragraph",
        "html",
        "thematic_break",
        "list_item",
        "list_item",
        "thematic_break",
        "html",
        "thematic_break",
        "paragraph",
    ]
    assert doc.chunks[0].parent is None
    assert all(c.parent == 1 for c in doc.chunks[2:])


def test_tables_and_unicode() -> None:
    doc = parse(DOCUMENTS["unicode-tabs.md"])
    assert doc.title == "Überschrift mit Ümläuten 🚢"
    table = next(c for c in doc.chunks if c.type is ChunkType.TABLE)
    assert table.text.startswith("| 名前 |")
    assert table.end_char == len(DOCUMENTS["unicode-tabs.md"])
    assert [c.type.value for c in doc.chunks] == [
        "heading",
        "paragraph",
        "list_item",
        "list_item",
        "paragraph",
        "table",
    ]
    assert doc.chunks[3].parent == 2
    assert doc.chunks[4].parent == 2


def test_crlf_gives_the_same_tree_as_lf() -> None:
    lf, crlf = parse(DOCUMENTS["readme.md"]), parse(DOCUMENTS["readme-crlf"])
    assert [(c.type, c.parent, c.start_line, c.end_line) for c in lf.chunks] == [
        (c.type, c.parent, c.start_line, c.end_line) for c in crlf.chunks
    ]
    assert all(c.text.endswith("\r\n") for c in crlf.chunks)
    assert [c.text.replace("\r\n", "\n") for c in crlf.chunks] == [c.text for c in lf.chunks]
    cr = parse(DOCUMENTS["design-note-cr"])
    assert len(cr.chunks) == len(parse(DOCUMENTS["design-note.md"]).chunks)


def test_no_final_newline_leaves_the_last_chunk_open() -> None:
    doc = parse(DOCUMENTS["changelog-no-final-newline"])
    last = doc.chunks[-1]
    assert last.text == "2. Dropped Python 3.9."
    assert last.separator == ""
    assert parse("word").chunks[0].text == "word"


def test_leading_and_trailing_blank_lines() -> None:
    doc = parse("\n \n# T\n\ntext\n\n\t\n")
    assert doc.preamble == "\n \n"
    assert [(c.text, c.separator) for c in doc.chunks] == [("# T\n", "\n"), ("text\n", "\n\t\n")]


def test_titles() -> None:
    assert parse("para\n\n## Second *level*  ##\n# First\n").title == "Second *level*"
    assert parse("#\n\n# Real\n").title == "Real"
    assert parse("- # in a list\n\nplain\n").title is None
    assert parse("Multi\nline\n===\n").title == "Multi\nline"


def test_block_on_the_marker_line_stays_in_the_item() -> None:
    doc = parse("- - a\n  - b\n- > quote\n  > more\n-\n  late paragraph\n")
    assert [(c.type.value, c.text, c.parent) for c in doc.chunks] == [
        ("list_item", "- - a\n  - b\n", None),
        ("list_item", "- > quote\n  > more\n", None),
        ("list_item", "-\n", None),
        ("paragraph", "  late paragraph\n", 2),
    ]


def test_edit_one_paragraph_and_export() -> None:
    original = DOCUMENTS["readme.md"]
    doc = parse(original)
    target = next(c for c in doc.chunks if c.text.startswith("See [CONTRIBUTING.md]"))
    new_text = "Contributions are welcome; read the guide first.\n"
    pairs = [(new_text if c is target else c.text, c.separator) for c in doc.chunks]
    edited = export(doc.preamble, pairs)
    assert edited == original.replace(target.text, new_text)
    again = parse(edited)
    assert len(again.chunks) == len(doc.chunks)
    for before, after in zip(doc.chunks, again.chunks, strict=True):
        assert (after.type, after.parent, after.position, after.separator) == (
            before.type,
            before.parent,
            before.position,
            before.separator,
        )
        assert after.text == (new_text if before is target else before.text)


def test_edit_that_drops_the_final_newline_does_not_merge_blocks() -> None:
    doc = parse("first\n\nsecond\n")
    pairs = [("edited", doc.chunks[0].separator), (doc.chunks[1].text, "")]
    assert export(doc.preamble, pairs) == "edited\n\nsecond\n"
    assert export("", [("a", ""), ("b", "")]) == "a\nb"
    assert export("", [("a", ""), ("", "")]) == "a"
    assert export("", [("a", "")], newline="\r\n") == "a"
    assert export("", [("a", ""), ("b", "")], newline="\r\n") == "a\r\nb"


def test_refusals() -> None:
    with pytest.raises(InvalidArgument, match="NUL character at offset 3"):
        parse("abc\0")
    with pytest.raises(InvalidArgument, match="lone surrogate"):
        parse("a\ud800b")
    too_big = "x" * (markdown.MAX_DOCUMENT_BYTES + 1)
    with pytest.raises(InvalidArgument, match=rf"{len(too_big)} bytes; the limit is") as info:
        parse(too_big)
    assert info.value.details == {"size": len(too_big), "limit": markdown.MAX_DOCUMENT_BYTES}
    # The limit counts UTF-8 bytes, not characters.
    with pytest.raises(InvalidArgument):
        parse("é" * (markdown.MAX_DOCUMENT_BYTES // 2 + 1))


def test_deep_nesting_beyond_the_parser_limit_stays_lossless() -> None:
    quotes = "".join(">" * n + " q\n" for n in range(1, 40))
    items = "".join("  " * n + "- item\n" for n in range(40))
    for text in (quotes, items, "[" * 5000 + "x" + "]" * 5000):
        _check(text, parse(text))


_LINES = st.sampled_from(
    [
        "",
        "",
        "   ",
        "\t",
        "# Heading",
        "## Sub *heading* ##",
        "###### six",
        "####### seven",
        "Setext",
        "===",
        "---",
        "***",
        "- item",
        "  - nested",
        "    - deeper",
        "* star",
        "+ plus",
        "1. one",
        "2) two",
        "   3. three",
        "-",
        "```",
        "```python x",
        "~~~",
        "````",
        "    indented code",
        "\tcode with tab",
        "> quote",
        "> > nested quote",
        "> - item in a quote",
        "- > quote in an item",
        "1. - item in an item",
        "  ```",
        ">",
        "| a | b |",
        "|---|:-:|",
        "| 1 | 2 |",
        "<div>",
        "</div>",
        "<!-- comment -->",
        "[ref]: /url 'title'",
        "[ref]:",
        "plain words here",
        "lazy continuation",
        "潮汐 ünïcödé 🚢",
        "trailing spaces  ",
        "\\",
        "\x0c",
    ]
)
_NEWLINES = st.sampled_from(["\n", "\n", "\n", "\r\n", "\r"])


@st.composite
def _markdownish(draw: st.DrawFn) -> str:
    n = draw(st.integers(min_value=0, max_value=40))
    parts = []
    for _ in range(n):
        indent = draw(st.sampled_from(["", "", "", "  ", "   ", "    ", "\t"]))
        parts.append(indent + draw(_LINES) + draw(_NEWLINES))
    text = "".join(parts)
    if draw(st.booleans()):
        text = re.sub(r"(\r\n|\r|\n)$", "", text)
    return text


@settings(max_examples=400, deadline=None)
@given(_markdownish())
def test_property_markdownish_documents(text: str) -> None:
    _check(text, parse(text))


# Everything st.text() can draw except NUL (refused on purpose) and lone surrogates.
_ANY_BUT_NUL = st.characters(exclude_characters="\0", exclude_categories=["Cs"])


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=_ANY_BUT_NUL, max_size=300))
def test_property_arbitrary_text(text: str) -> None:
    _check(text, parse(text))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="#->*|`~ \t\n\r1.[]:=_<!a", max_size=200))
def test_property_dense_markup(text: str) -> None:
    _check(text, parse(text))
