"""Markdown to a tree of typed chunks with exact source spans, and back (docs/spec.md, Planes).

Pure: no I/O. markdown-it-py finds the blocks but gives line ranges only, so every span is
computed from a table of line starts over the *original* text. A line ends at CRLF, a lone CR
or LF, exactly as markdown-it normalises newlines, so its line numbers index our table.

Chunks own whole lines. A chunk runs from its first line to the next chunk's first line; the
blank lines at the end of that range are its ``separator``. So ``preamble`` plus every chunk's
text and separator rebuilds the input byte for byte, whatever markdown-it made of it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from markdown_it import MarkdownIt
from markdown_it.token import Token

from palimpsest.errors import InvalidArgument

MAX_DOCUMENT_BYTES = 5 * 1024 * 1024

# The same line ends markdown-it normalises to "\n"; str.splitlines() would also split at
# \v, \f, \x85, \u2028 and friends, which markdown-it keeps inside a line.
_NEWLINE = re.compile(r"\r\n|\r|\n")

# CommonMark plus GFM tables. ``inline_definitions`` makes link reference definitions real
# tokens, so no non-blank line is left outside every block. Only blocks matter here, so the
# inline pass (a fifth of the time on large documents) is off; inline tokens keep their content.
_PARSER = (
    MarkdownIt("commonmark", {"inline_definitions": True})
    .enable("table")
    .disable(["inline", "text_join"])
)


class ChunkType(StrEnum):
    HEADING = "heading"
    PARAGRAPH = "paragraph"
    LIST_ITEM = "list_item"
    CODE = "code"
    TABLE = "table"
    QUOTE = "quote"
    HTML = "html"
    THEMATIC_BREAK = "thematic_break"
    DEFINITION = "definition"  # a link reference definition: [id]: /url "title"
    TURN = "turn"  # a conversation turn the consolidator wrote (never parsed from Markdown)


_LEAF_TYPES = {
    "heading": ChunkType.HEADING,
    "paragraph": ChunkType.PARAGRAPH,
    "fence": ChunkType.CODE,
    "code_block": ChunkType.CODE,
    "table": ChunkType.TABLE,
    "blockquote": ChunkType.QUOTE,
    "html_block": ChunkType.HTML,
    "hr": ChunkType.THEMATIC_BREAK,
    "definition": ChunkType.DEFINITION,
}
_LIST_TYPES = frozenset({"bullet_list", "ordered_list"})


@dataclass(frozen=True, slots=True)
class ParsedChunk:
    index: int  # position in reading order
    type: ChunkType
    text: str  # the exact source slice, with its final newline if it has one
    separator: str  # blank lines between this chunk and the next ('' if none)
    parent: int | None  # index of the parent chunk; None at the top of the tree
    position: int  # order among the parent's children
    level: int | None  # 1-6 for headings
    language: str | None  # first word of a code fence's info string
    start_line: int  # 0-based, end exclusive
    end_line: int
    start_char: int  # str offsets into the original text: text == original[start:end]
    end_char: int


@dataclass(frozen=True)
class ParsedDocument:
    title: str | None  # text of the first top-level heading, without its # marks or underline
    preamble: str  # blank lines before the first chunk (the whole text if there is none)
    chunks: tuple[ParsedChunk, ...]

    def export(self) -> str:
        return export(self.preamble, [(c.text, c.separator) for c in self.chunks])


def parse(text: str) -> ParsedDocument:
    """Split ``text`` into chunks; refuses oversized documents, NUL and lone surrogates."""
    check_document(text)
    starts = _line_starts(text)
    builder = _Builder()
    builder.blocks(_block_tree(_PARSER.parse(text)), None)
    drafts = builder.drafts
    if not drafts:
        return ParsedDocument(title=None, preamble=text, chunks=())
    n_lines = len(starts) - 1
    positions: dict[int | None, int] = {}
    chunks: list[ParsedChunk] = []
    for i, draft in enumerate(drafts):
        limit = drafts[i + 1].start if i + 1 < len(drafts) else n_lines
        end = limit
        while end > draft.start + 1 and _is_blank(text, starts, end - 1):
            end -= 1
        position = positions.get(draft.parent, 0)
        positions[draft.parent] = position + 1
        chunks.append(
            ParsedChunk(
                index=i,
                type=draft.type,
                text=text[starts[draft.start] : starts[end]],
                separator=text[starts[end] : starts[limit]],
                parent=draft.parent,
                position=position,
                level=draft.level,
                language=draft.language,
                start_line=draft.start,
                end_line=end,
                start_char=starts[draft.start],
                end_char=starts[end],
            )
        )
    preamble = text[: starts[drafts[0].start]]
    return ParsedDocument(title=builder.title, preamble=preamble, chunks=tuple(chunks))


def export(preamble: str, chunks: Iterable[tuple[str, str]], newline: str = "\n") -> str:
    """Rebuild Markdown from (text, separator) pairs in reading order.

    The identity on what ``parse`` returned. An edited text that lost its final newline gets
    ``newline`` back when something follows, so it cannot run into the next block.
    """
    pairs = list(chunks)
    out: list[str] = []
    followed = False  # does anything non-empty come after the pair being written?
    for text, separator in reversed(pairs):
        if text and not text.endswith(("\n", "\r")) and (separator or followed):
            separator = newline + separator
        out.append(text + separator)
        followed = followed or bool(text or separator)
    out.append(preamble)
    return "".join(reversed(out))


def check_document(text: str) -> None:
    """Refuse what no chunk should hold: NUL, lone surrogates, more than the size limit."""
    nul = text.find("\0")
    if nul >= 0:
        raise InvalidArgument(
            f"document contains a NUL character at offset {nul}; remove it", offset=nul
        )
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidArgument(
            f"document is not valid Unicode (lone surrogate at offset {exc.start})",
            offset=exc.start,
        ) from None
    if size > MAX_DOCUMENT_BYTES:
        raise InvalidArgument(
            f"document is {size} bytes; the limit is {MAX_DOCUMENT_BYTES}",
            size=size,
            limit=MAX_DOCUMENT_BYTES,
        )


def _line_starts(text: str) -> list[int]:
    """Offsets where each line starts, plus ``len(text)`` as the end of the last line."""
    starts = [0]
    starts.extend(m.end() for m in _NEWLINE.finditer(text))
    if starts[-1] != len(text):  # the last line has no newline
        starts.append(len(text))
    return starts


def _is_blank(text: str, starts: list[int], line: int) -> bool:
    # Only spaces and tabs make a line blank for CommonMark; \f or NBSP do not.
    return not text[starts[line] : starts[line + 1]].strip(" \t\r\n")


@dataclass(slots=True)
class _Block:
    """A block token with its children: what markdown_it.tree.SyntaxTreeNode gives, cheaper."""

    type: str  # the token type without "_open": "heading", "bullet_list", "inline", ...
    map: list[int] | None
    tag: str
    info: str
    content: str
    children: list[_Block] = field(default_factory=list)


def _block_tree(tokens: Sequence[Token]) -> list[_Block]:
    roots: list[_Block] = []
    stack = [roots]
    for token in tokens:
        if token.nesting < 0:
            stack.pop()
            continue
        kind = token.type.removesuffix("_open")
        block = _Block(kind, token.map, token.tag, token.info, token.content)
        stack[-1].append(block)
        if token.nesting > 0:
            stack.append(block.children)
    return roots


@dataclass(slots=True)
class _Draft:
    start: int
    type: ChunkType
    parent: int | None
    level: int | None = None
    language: str | None = None


class _Builder:
    """Walks markdown-it's block tree and lays out chunk starts in source order.

    ``next_free`` is the first line no earlier chunk claims. A block starting before it lies
    inside a chunk already made (a quote's paragraphs, a list on a list item's first line), so
    it stays in that chunk's text and gets no chunk of its own. Starts therefore strictly
    increase and no two chunks share a line.
    """

    def __init__(self) -> None:
        self.drafts: list[_Draft] = []
        self.next_free = 0
        self.sections: list[tuple[int, int]] = []  # open top-level headings: (level, index)
        self.title: str | None = None

    def blocks(self, nodes: Sequence[_Block], item: int | None) -> None:
        for node in nodes:
            if node.map is None:  # not expected for block tokens; look inside instead
                self.blocks(node.children, item)
            elif node.map[0] < self.next_free:
                continue
            elif node.type in _LIST_TYPES:
                for child in node.children:
                    self.list_item(child, item)
            else:
                self.leaf(node, item)

    def list_item(self, node: _Block, item: int | None) -> None:
        if node.map is None:
            self.blocks(node.children, item)
            return
        start = node.map[0]
        if start < self.next_free:
            return
        index = self.add(_Draft(start, ChunkType.LIST_ITEM, self.parent_of(item)))
        self.next_free = start + 1
        children = node.children
        # The item owns its first block when that block begins on the marker line (the usual
        # "- text"); later blocks, such as a loose item's second paragraph, become children.
        first = children[0].map if children else None
        if first is not None and first[0] == start:
            self.next_free = max(self.next_free, first[1])
            children = children[1:]
        self.blocks(children, index)

    def leaf(self, node: _Block, item: int | None) -> None:
        assert node.map is not None
        kind = _LEAF_TYPES.get(node.type, ChunkType.PARAGRAPH)
        draft = _Draft(node.map[0], kind, self.parent_of(item))
        if kind is ChunkType.HEADING:
            draft.level = int(node.tag[1:])
        elif node.type == "fence":
            words = node.info.split()
            draft.language = words[0] if words else None
        if kind is ChunkType.HEADING and item is None:
            # Headings outside list items build the section tree: a heading closes every open
            # section of the same or a deeper level and becomes the parent of what follows.
            level = draft.level or 1
            while self.sections and self.sections[-1][0] >= level:
                self.sections.pop()
            draft.parent = self.sections[-1][1] if self.sections else None
            self.sections.append((level, self.add(draft)))
            if self.title is None:
                self.title = _heading_text(node) or None
        else:
            self.add(draft)
        self.next_free = max(self.next_free, node.map[1])

    def parent_of(self, item: int | None) -> int | None:
        if item is not None:
            return item
        return self.sections[-1][1] if self.sections else None

    def add(self, draft: _Draft) -> int:
        self.drafts.append(draft)
        return len(self.drafts) - 1


def _heading_text(node: _Block) -> str:
    inline = node.children[0] if node.children else None
    return inline.content.strip() if inline is not None else ""
