"""Memory-as-files paths and texts: what ``canonical`` refuses and accepts, and the texts
matching the Anthropic SDK's local filesystem memory tool."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from hypothesis import given
from hypothesis import strategies as st

from palimpsest.domain.notes import memory_paths as mp
from palimpsest.errors import InvalidArgument

TEXT = "# Notes\n\nalpha\nbeta\nalpha beta\n\ngamma"


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/etc/passwd", "must start with /memories"),
        ("/memoriesX/a", "must start with /memories"),
        ("/memories/../x", "would escape /memories directory"),
        ("/memories/a/./b", "would escape /memories directory"),
        ("/memories/%2e%2e/x", "percent-encoded"),
        ("/memories/a%2Fb", "percent-encoded"),
        ("/memories/\u2025/x", "reads as"),
        ("/memories/\uff0e\uff0e/x", "reads as"),
        ("/memories/a\u2044b", "reads as"),
        ("/memories/a\x00b", "control or invisible"),
        ("/memories/a\u200bb", "control or invisible"),
        ("/memories/a\\b", "backslash"),
        ("/memories//a", "empty segment"),
        ("/memories/" + "a" * 256, "over 255"),
        ("/memories/" + "a/" * 300, "the limit is 512"),
        ("/memories/.. ", "only dots and spaces"),
        ("/memories/.. /x", "only dots and spaces"),
        ("/memories/...", "only dots and spaces"),
        ("/memories/a/ ", "only dots and spaces"),
        ("/memories/ . ", "only dots and spaces"),
        ("/memories/\u3000", "only dots and spaces"),
        ("/memories/ notes.md", "begins or ends with a space"),
        ("/memories/notes.md\u00a0", "begins or ends with a space"),
        ("/memories/a /b", "begins or ends with a space"),
    ],
)
def test_refused_paths_name_the_reason(path: str, words: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        mp.canonical(path)
    assert words in caught.value.message
    assert "\x00" not in caught.value.message


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/memories", "/memories"),
        ("/memories/", "/memories"),
        ("/memories/notes/", "/memories/notes"),
        ("/memories/cafe\u0301.md", "/memories/caf\u00e9.md"),
        ("/memories/a b/.hidden", "/memories/a b/.hidden"),
        ("/memories/100%.md", "/memories/100%.md"),
        ("/memories/...md", "/memories/...md"),
        ("/memories/to do. notes", "/memories/to do. notes"),
    ],
)
def test_accepted_paths_are_canonical(path: str, expected: str) -> None:
    assert mp.canonical(path) == expected


@given(st.text(max_size=40))
def test_no_accepted_path_leaves_the_tree(tail: str) -> None:
    try:
        path = mp.canonical("/memories/" + tail)
    except InvalidArgument:
        return
    seen = unicodedata.normalize("NFKC", path)
    assert seen == "/memories" or seen.startswith("/memories/")
    assert not {".", ".."} & set(seen.split("/"))
    assert all(s.replace(".", "").strip() for s in seen.split("/")[2:])
    assert "\\" not in seen
    assert "\x00" not in seen


def test_texts_match_the_sdk_local_tool(tmp_path: Path) -> None:
    local = BetaLocalFilesystemMemoryTool(str(tmp_path))
    path = "/memories/n.md"
    local.execute(BetaMemoryTool20250818CreateCommand(command="create", path=path, file_text=TEXT))
    for view_range in (None, [2, 4], [3, -1], [1, 1]):
        want = local.execute(
            BetaMemoryTool20250818ViewCommand(command="view", path=path, view_range=view_range)
        )
        bounds = None if view_range is None else (view_range[0], view_range[1])
        assert mp.file_view(path, TEXT, bounds) == want
    new, line = mp.replaced(path, TEXT, "gamma", "delta")
    want = local.execute(
        BetaMemoryTool20250818StrReplaceCommand(
            command="str_replace", path=path, old_str="gamma", new_str="delta"
        )
    )
    assert mp.edit_snippet(new, line) == want
    for old in ("alpha", "absent"):
        with pytest.raises(ToolError) as theirs:
            local.execute(
                BetaMemoryTool20250818StrReplaceCommand(
                    command="str_replace", path=path, old_str=old, new_str="x"
                )
            )
        with pytest.raises(InvalidArgument) as ours:
            mp.replaced(path, new, old, "x")
        assert ours.value.message == theirs.value.content
    local.execute(
        BetaMemoryTool20250818InsertCommand(
            command="insert", path=path, insert_line=2, insert_text="inserted\n"
        )
    )
    assert mp.inserted(new, 2, "inserted\n") == (tmp_path / "memories" / "n.md").read_text()


def test_a_directory_lists_two_levels_with_its_files_sizes() -> None:
    sizes = {"a.md": 10, "d/b.md": 2048, "d/e/deep.md": 1, ".hidden/x": 5, "d/.h": 7}
    assert mp.directory_view("/memories", sizes) == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        "items:\n2.0K\t/memories\n10B\t/memories/a.md\n2.0K\t/memories/d/\n"
        "2K\t/memories/d/b.md\n1B\t/memories/d/e/"
    )
