"""Memory-as-files paths, and the texts the memory tool answers with
(docs/reference/memory-files.md).

A path names a file or a directory of the ``/memories`` tree. ``canonical`` refuses, before
anything is read or written, every path that could mean something outside the tree or
something other than what it shows: ``.``/``..`` segments, percent-encoded characters, a
backslash, a control or invisible character (NUL included), a character that compatibility
normalisation turns into ``.``, ``/``, ``\\`` or ``%`` (a fullwidth solidus, a one-dot leader),
a slash lookalike (a division or fraction slash), an empty segment, a name of only dots and
white space (``...``, ``.. ``, a single space: what some systems read as ``..`` or as nothing),
a name that begins or ends with white space, and a path over ``MAX_PATH_CHARS``. The texts
follow the Anthropic SDK's local memory tool (``BetaLocalFilesystemMemoryTool`` in
``anthropic.lib.tools._beta_builtin_memory_tool``), so a model sees what it was trained on.
"""

from __future__ import annotations

import re
import unicodedata

from palimpsest.errors import InvalidArgument

ROOT = "/memories"
MAX_PATH_CHARS = 512
MAX_SEGMENT_CHARS = 255
MAX_LINES = 999_999
LINE_NUMBER_WIDTH = len(str(MAX_LINES))
_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")
_MEANINGFUL = frozenset("./\\%")
# Slashes that compatibility normalisation leaves alone but a reader takes for '/' or '\\'.
_SLASHES = frozenset("\u2044\u2215\u2216\u2571\u2572\u29f5\u29f8\u29f9")
# Control, format (zero-width, bidi overrides), surrogate, private-use, unassigned, line and
# paragraph separators: none of them belongs in a name a person reads.
_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def shown(path: str) -> str:
    """The path as an error message may echo it: invisible characters escaped, length capped."""
    cut = path[:MAX_PATH_CHARS]
    return "".join(
        ch if unicodedata.category(ch) not in _INVISIBLE else f"\\u{ord(ch):04x}" for ch in cut
    )


def canonical(path: str) -> str:
    """The NFC form of ``path`` without a trailing slash, or ``InvalidArgument``."""
    if len(path) > MAX_PATH_CHARS:
        raise InvalidArgument(
            f"Path is {len(path)} characters; the limit is {MAX_PATH_CHARS}",
            limit=MAX_PATH_CHARS,
        )
    text = unicodedata.normalize("NFC", path)
    if any(unicodedata.category(ch) in _INVISIBLE for ch in text):
        raise InvalidArgument(f"Path {shown(path)} contains a control or invisible character")
    if "\\" in text:
        raise InvalidArgument(f"Path {shown(path)} contains a backslash")
    if _ENCODED.search(text):
        raise InvalidArgument(f"Path {shown(path)} contains a percent-encoded character")
    for ch in text:
        looks = ch in _SLASHES or _MEANINGFUL & set(unicodedata.normalize("NFKC", ch))
        if ch not in _MEANINGFUL and looks:
            raise InvalidArgument(
                f"Path {shown(path)} contains {ch!r}, which reads as '.', '/', '\\' or '%'"
            )
    if text != ROOT and not text.startswith(ROOT + "/"):
        raise InvalidArgument(f"Path must start with /memories, got: {shown(path)}")
    rest = text[len(ROOT) :]
    if rest.endswith("/"):
        rest = rest[:-1]
    if not rest:
        return ROOT
    segments = rest[1:].split("/")
    if any(s in (".", "..") for s in segments):
        raise InvalidArgument(f"Path {shown(path)} would escape /memories directory")
    if any(not s for s in segments):
        raise InvalidArgument(f"Path {shown(path)} has an empty segment")
    if any(not s.replace(".", "").strip() for s in segments):
        raise InvalidArgument(f"Path {shown(path)} has a name of only dots and spaces")
    if any(s != s.strip() for s in segments):
        raise InvalidArgument(f"Path {shown(path)} has a name that begins or ends with a space")
    if any(len(s) > MAX_SEGMENT_CHARS for s in segments):
        raise InvalidArgument(
            f"Path {shown(path)} has a name over {MAX_SEGMENT_CHARS} characters",
            limit=MAX_SEGMENT_CHARS,
        )
    return ROOT + "/" + "/".join(segments)


def name_of(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def ancestors(path: str) -> list[str]:
    """The directories above ``path`` inside the tree, nearest last, the root left out."""
    segments = path[len(ROOT) + 1 :].split("/")[:-1] if path != ROOT else []
    return [ROOT + "/" + "/".join(segments[: i + 1]) for i in range(len(segments))]


def file_size(size: int) -> str:
    """A byte count as the SDK's listing shows it (``0B``, ``512B``, ``1.5K``)."""
    if size == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((size.bit_length() - 1) // 10, len(units) - 1)
    value = size / (1024**i)
    return f"{int(value)}{units[i]}" if value == int(value) else f"{value:.1f}{units[i]}"


def numbered(lines: list[str], first: int) -> str:
    return "\n".join(
        f"{str(i + first).rjust(LINE_NUMBER_WIDTH)}\t{line}" for i, line in enumerate(lines)
    )


def file_view(path: str, content: str, view_range: tuple[int, int] | None) -> str:
    """A file with line numbers, or the lines ``view_range`` names (1-based; end -1: to the end)."""
    lines = content.split("\n")
    if len(lines) > MAX_LINES:
        raise InvalidArgument(f"File {path} exceeds maximum line limit of 999,999 lines.")
    first = 1
    if view_range is not None:
        start, end = view_range
        if start < 1 or (end != -1 and end < start):
            raise InvalidArgument(
                f"Invalid `view_range` parameter: [{start}, {end}]. The start must be at "
                "least 1 and the end -1 or not before the start."
            )
        first = start
        lines = lines[start - 1 : len(lines) if end == -1 else end]
    return f"Here's the content of {path} with line numbers:\n" + numbered(lines, first)


def directory_view(path: str, sizes: dict[str, int]) -> str:
    """The listing of directory ``path`` two levels deep; ``sizes`` maps every file below it
    (its path relative to ``path``) to its size in bytes. A directory's size is its files'."""
    entries: dict[str, int] = {}
    for relative, size in sizes.items():
        parts = relative.split("/")
        if any(p.startswith(".") for p in parts[:2]):
            continue
        for depth in range(min(len(parts), 2)):
            key = "/".join(parts[: depth + 1]) + ("/" if depth + 1 < len(parts) else "")
            entries[key] = entries.get(key, 0) + size
    header = (
        f"Here're the files and directories up to 2 levels deep in {path}, excluding hidden items:"
    )
    lines = [f"{file_size(sum(sizes.values()))}\t{path}"]
    ordered = sorted(entries, key=lambda k: k.rstrip("/").split("/"))
    lines += [f"{file_size(entries[k])}\t{path}/{k}" for k in ordered]
    return header + "\n" + "\n".join(lines)


def edit_snippet(content: str, line_index: int) -> str:
    lines = content.split("\n")
    start = max(0, line_index - 2)
    end = min(len(lines), line_index + 3)
    return (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n" + numbered(lines[start:end], start + 1)
    )


def replaced(path: str, content: str, old: str, new: str) -> tuple[str, int]:
    """``content`` with the one occurrence of ``old`` replaced, and the changed line's index;
    zero or several occurrences are refused with the memory tool's words."""
    if not old:
        raise InvalidArgument("Parameter `old_str` must not be empty")
    count = content.count(old)
    if count == 0:
        raise InvalidArgument(
            f"No replacement was performed, old_str `{old}` did not appear verbatim in {path}."
        )
    if count > 1:
        lines: list[int] = []
        start = content.find(old)
        while start != -1:
            lines.append(content[:start].count("\n") + 1)
            start = content.find(old, start + 1)
        raise InvalidArgument(
            f"No replacement was performed. Multiple occurrences of old_str `{old}` in lines: "
            f"{', '.join(map(str, lines))}. Please ensure it is unique"
        )
    at = content.find(old)
    return content.replace(old, new), content[:at].count("\n")


def inserted(content: str, line: int, text: str) -> str:
    """``content`` with ``text`` inserted after line ``line`` (0: at the top)."""
    lines = content.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not 0 <= line <= len(lines):
        raise InvalidArgument(
            f"Invalid `insert_line` parameter: {line}. It should be within the range "
            f"[0, {len(lines)}]."
        )
    lines.insert(line, text.rstrip("\n"))
    out = "\n".join(lines)
    return out if out.endswith("\n") else out + "\n"
