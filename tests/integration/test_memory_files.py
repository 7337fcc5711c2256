"""Memory as files on the real server: ``PalimpsestMemoryTool`` answers the Anthropic SDK's own
command types (no model is called) with the words of the SDK's local filesystem tool, every
file is a versioned document, a refused path writes nothing, and another scope's files are
never visible; the MCP tool ``memory`` runs the same core."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from anthropic.lib.tools import ToolError
from anthropic.lib.tools._beta_builtin_memory_tool import BetaLocalFilesystemMemoryTool
from anthropic.types.beta import (
    BetaMemoryTool20250818Command,
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.integrations.anthropic import PalimpsestMemoryTool
from palimpsest.resolvers.documents import memory_files
from palimpsest.server import serve_in_thread
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.test_document_revisions import HISTORY
from tests.integration.test_mcp import http_client

PREFS = "# Preferences\n\nI like coffee.\nI like tea.\n"
FILE_ID = "query($p: String!) { memoryFile(scope: USER, path: $p) { documentId path } }"
AT = (
    "query($id: ID!, $r: Int) { document(scope: USER, id: $id, revision: $r)"
    " { markdown summary { path title } } }"
)
DOCS = "{ documents(scope: USER, limit: 500) { items { id path revision } } }"


@pytest.fixture
def tool(live_server_url: str, who: str) -> Iterator[PalimpsestMemoryTool]:
    with PalimpsestMemoryTool(url=live_server_url, token=who, scope="USER") as opened:
        yield opened


def view(path: str, view_range: list[int] | None = None) -> BetaMemoryTool20250818ViewCommand:
    return BetaMemoryTool20250818ViewCommand(command="view", path=path, view_range=view_range)


def create(path: str, text: str) -> BetaMemoryTool20250818CreateCommand:
    return BetaMemoryTool20250818CreateCommand(command="create", path=path, file_text=text)


def replace(path: str, old: str, new: str) -> BetaMemoryTool20250818StrReplaceCommand:
    return BetaMemoryTool20250818StrReplaceCommand(
        command="str_replace", path=path, old_str=old, new_str=new
    )


def insert(path: str, line: int, text: str) -> BetaMemoryTool20250818InsertCommand:
    return BetaMemoryTool20250818InsertCommand(
        command="insert", path=path, insert_line=line, insert_text=text
    )


def delete(path: str) -> BetaMemoryTool20250818DeleteCommand:
    return BetaMemoryTool20250818DeleteCommand(command="delete", path=path)


def rename(old: str, new: str) -> BetaMemoryTool20250818RenameCommand:
    return BetaMemoryTool20250818RenameCommand(command="rename", old_path=old, new_path=new)


def refusal(tool: Any, command: BetaMemoryTool20250818Command) -> str:
    with pytest.raises(ToolError) as caught:
        tool.execute(command)
    return str(caught.value.content)


def test_round_trip_with_the_sdk_commands_matches_the_local_tool(
    tool: PalimpsestMemoryTool, gql: Gql, who: str, tmp_path: Path
) -> None:
    local = BetaLocalFilesystemMemoryTool(str(tmp_path))
    old, new = "/memories/notes/prefs.md", "/memories/archive/prefs.md"
    steps: list[BetaMemoryTool20250818Command] = [
        create(old, PREFS),
        view(old),
        view(old, [2, 3]),
        view(old, [3, -1]),
        replace(old, "coffee", "espresso"),
        insert(old, 1, "(kept by the agent)"),
        view(old),
    ]
    for step in steps:
        assert tool.execute(step) == local.execute(step), step
    # Zero or several matches: refused with the tool's words (after the code), nothing written.
    for step in (replace(old, "I like", "x"), replace(old, "absent", "x"), insert(old, 99, "x")):
        with pytest.raises(ToolError) as expected:
            local.execute(step)
        assert refusal(tool, step) == f"INVALID_ARGUMENT: {expected.value.content}"
    doc_id = ok(gql(FILE_ID, who, p=old))["memoryFile"]["documentId"]
    assert refusal(tool, create(old, "again")) == f"CONFLICT: File {old} already exists"

    listing = tool.execute(view("/memories"))
    size = len((PREFS.replace("coffee", "espresso")).encode()) + len("(kept by the agent)\n")
    assert listing == (
        "Here're the files and directories up to 2 levels deep in /memories, excluding hidden "
        f"items:\n{size}B\t/memories\n{size}B\t/memories/notes/\n{size}B\t/memories/notes/prefs.md"
    )
    assert tool.execute(rename(old, new)) == local.execute(rename(old, new))
    assert refusal(tool, view(old)) == (
        f"NOT_FOUND: The path {old} does not exist. Please provide a valid path."
    )
    assert tool.execute(view(new)) == local.execute(view(new))
    # The renamed file is the same document, its history whole.
    assert ok(gql(FILE_ID, who, p=new))["memoryFile"]["documentId"] == doc_id
    assert tool.execute(delete("/memories/archive")) == "Successfully deleted /memories/archive"
    assert refusal(tool, view(new)).startswith("NOT_FOUND: ")
    assert str(tool.execute(view("/memories"))).endswith("excluding hidden items:\n0B\t/memories")
    history = ok(gql(HISTORY, who, id=doc_id))["documentHistory"]["items"]
    assert [(h["revision"], h["deleted"]) for h in history] == [
        (5, True),
        (4, False),
        (3, False),
        (2, False),
        (1, False),
    ]
    heads = {r: ok(gql(AT, who, id=doc_id, r=r))["document"] for r in (1, 2, 3, 4)}
    assert heads[1]["markdown"] == PREFS
    assert heads[2]["markdown"] == PREFS.replace("coffee", "espresso")
    assert [heads[r]["summary"]["path"] for r in (1, 2, 3, 4)] == [old, old, old, new]
    assert heads[4]["markdown"] == heads[3]["markdown"]  # a rename changes no byte


BAD_PATHS = [
    "/etc/passwd",
    "memories/a.md",
    "/memoriesX/a.md",
    "/memories/../etc/passwd",
    "/memories/a/../../b.md",
    "/memories/./a.md",
    "/memories/%2e%2e/a.md",
    "/memories/%2E%2E%2Fa.md",
    "/memories/a%00.md",
    "/memories/\u2025/a.md",  # a two-dot leader, '..' under compatibility normalisation
    "/memories/\uff0e\uff0e/a.md",  # fullwidth full stops
    "/memories/a\uff0fb.md",  # a fullwidth solidus
    "/memories/a\u2215b.md",  # a division slash
    "/memories/a\x00b.md",
    "/memories/a\\..\\b.md",
    "/memories/a\u202eb.md",  # a right-to-left override
    "/memories//a.md",
    "/memories/" + "a" * 600,
    "/memories/" + "a" * 300 + "/b.md",
    # Names of only dots and spaces, or with a space at an end (issue 46, item 12).
    "/memories/.. ",
    "/memories/...",
    "/memories/ ",
    "/memories/... /a.md",
    "/memories/notes.md ",
]


def test_every_refused_path_writes_nothing(tool: PalimpsestMemoryTool, gql: Gql, who: str) -> None:
    tool.execute(create("/memories/keep.md", "kept\n"))
    before = ok(gql(DOCS, who))["documents"]["items"]
    listing = tool.execute(view("/memories"))
    for bad in BAD_PATHS:
        for step in (
            create(bad, "x"),
            view(bad),
            replace(bad, "kept", "x"),
            insert(bad, 0, "x"),
            delete(bad),
            rename("/memories/keep.md", bad),
            rename(bad, "/memories/moved.md"),
        ):
            assert refusal(tool, step).startswith("INVALID_ARGUMENT: "), (bad, step)
    for root in (delete("/memories"), rename("/memories", "/memories/x")):
        assert refusal(tool, root).startswith("INVALID_ARGUMENT: Cannot ")
    assert ok(gql(DOCS, who))["documents"]["items"] == before
    assert tool.execute(view("/memories")) == listing


def test_another_scope_never_sees_the_files(
    live_server_url: str, token: Callable[..., str], tenant: str
) -> None:
    user = f"files-{uuid.uuid4().hex[:8]}"
    mine = token(tenant, user, "writer", memory_scopes=[Scope.USER, Scope.AGENT, Scope.TENANT])
    tool = PalimpsestMemoryTool(url=live_server_url, token=mine)
    path = f"/memories/secret-{uuid.uuid4().hex[:6]}.md"
    tool.execute(create(path, "the code is 1234\n"))
    missing = "/memories/never-written.md"
    others = [
        PalimpsestMemoryTool(url=live_server_url, token=token(tenant, "someone-else", "writer")),
        PalimpsestMemoryTool(url=live_server_url, token=mine, scope="AGENT"),
        PalimpsestMemoryTool(
            url=live_server_url, token=token(f"t-{uuid.uuid4().hex[:8]}", "x", "writer")
        ),
    ]
    for other in others:
        listing = other.execute(view("/memories"))
        assert "secret" not in listing
        for step, absent in (
            (view(path), view(missing)),
            (replace(path, "1234", "0"), replace(missing, "1234", "0")),
            (insert(path, 0, "x"), insert(missing, 0, "x")),
            (delete(path), delete(missing)),
            (rename(path, "/memories/mine.md"), rename(missing, "/memories/mine.md")),
        ):
            # A foreign file answers exactly like one that was never written.
            assert refusal(other, step) == refusal(other, absent).replace(missing, path)
        # Its own file at the same path is its own.
        assert other.execute(create(path, "mine\n")) == f"File created successfully at: {path}"
        assert "mine" in other.execute(view(path))
    assert "the code is 1234" in tool.execute(view(path))
    for opened in (tool, *others):
        opened.close()


async def test_the_mcp_tool_runs_the_same_core(live_server_url: str, who: str) -> None:
    async with http_client(live_server_url, who) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["memory"].annotations is not None
        assert tools["memory"].annotations.destructive_hint is True
        made = await client.call_tool(
            "memory", {"command": "create", "path": "/memories/m.md", "file_text": "a\nb\n"}
        )
        assert not made.is_error
        assert made.structured_content is not None
        assert made.structured_content["text"] == "File created successfully at: /memories/m.md"
        seen = await client.call_tool("memory", {"command": "view", "path": "/memories/m.md"})
        assert seen.structured_content is not None
        assert seen.structured_content["text"].endswith("     1\ta\n     2\tb\n     3\t")
        bad = await client.call_tool("memory", {"command": "view", "path": "/memories/../x"})
        assert bad.is_error
        assert bad.structured_content is not None
        assert bad.structured_content["error"]["code"] == "INVALID_ARGUMENT"
        assert "would escape /memories directory" in bad.structured_content["error"]["message"]


GQL_VIEW = "query($p: String!) { memoryFile(scope: USER, path: $p) { text } }"
GQL_EDIT = """mutation($c: MemoryFileCommandInput!) {
  updateMemoryFile(scope: USER, command: $c) { text } }"""


async def test_a_file_whose_text_is_json_is_stored_as_written_through_mcp(
    live_server_url: str, gql: Gql, who: str
) -> None:
    """The text of a file is text, even when it is JSON: an object, a list or ``null``."""
    async with http_client(live_server_url, who) as client:
        for name, text in (("o", '{"a":1}'), ("l", "[1,2]"), ("n", "null")):
            path = f"/memories/{name}.json"
            made = await client.call_tool(
                "memory", {"command": "create", "path": path, "file_text": text}
            )
            assert not made.is_error, made.structured_content
            seen = await client.call_tool("memory", {"command": "view", "path": path})
            assert seen.structured_content is not None
            assert seen.structured_content["text"].endswith(f"     1\t{text}"), seen
            stored = ok(gql(FILE_ID, who, p=path))["memoryFile"]["documentId"]
            assert ok(gql(AT, who, id=stored, r=None))["document"]["markdown"] == text


async def test_graphql_and_mcp_answer_and_refuse_alike(
    live_server_url: str, gql: Gql, who: str
) -> None:
    """The same command through both doors: the same text, or the same code and message."""
    ok(gql(GQL_EDIT, who, c={"command": "CREATE", "path": "/memories/x.md", "fileText": "a\na\n"}))
    cases: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
        (GQL_VIEW, {"p": "/memories/x.md"}, {"command": "view", "path": "/memories/x.md"}),
        (GQL_VIEW, {"p": "/memories"}, {"command": "view", "path": "/memories"}),
        (GQL_VIEW, {"p": "/memories/none"}, {"command": "view", "path": "/memories/none"}),
        (GQL_VIEW, {"p": "/memories/%2e%2e"}, {"command": "view", "path": "/memories/%2e%2e"}),
        (
            GQL_EDIT,
            {"c": {"command": "STR_REPLACE", "path": "/memories/x.md", "oldStr": "a"}},
            {"command": "str_replace", "path": "/memories/x.md", "old_str": "a"},
        ),
        (
            GQL_EDIT,
            {"c": {"command": "CREATE", "path": "/memories/x.md", "fileText": "b"}},
            {"command": "create", "path": "/memories/x.md", "file_text": "b"},
        ),
    ]
    codes = [None, None, "NOT_FOUND", "INVALID_ARGUMENT", "INVALID_ARGUMENT", "CONFLICT"]
    async with http_client(live_server_url, who) as client:
        for (query, variables, arguments), code in zip(cases, codes, strict=True):
            body = gql(query, who, **variables)
            result = await client.call_tool("memory", arguments)
            assert result.structured_content is not None
            if code is not None:
                error = body["errors"][0]
                assert error["extensions"]["code"] == code, arguments
                assert result.is_error, arguments
                assert result.structured_content["error"]["code"] == error["extensions"]["code"]
                assert result.structured_content["error"]["message"] == error["message"]
            else:
                assert not result.is_error, arguments
                assert "errors" not in body, body
                [answer] = body["data"].values()
                assert result.structured_content["text"] == answer["text"]


def test_a_directory_rename_or_delete_is_capped_and_runs_in_batches(
    settings: Settings, token: Callable[..., str], tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over PALIMPSEST_MEMORY_DIR_MAX_FILES a directory rename or delete is refused naming the
    limit, and changes nothing; within it, the files move (or go) in transactions of
    ``BATCH_FILES``, every one of them."""
    monkeypatch.setattr(memory_files, "BATCH_FILES", 2)
    who = token(tenant, f"files-cap-{uuid.uuid4().hex[:8]}", "writer")
    capped = settings.replace(memory_dir_max_files=3)
    with serve_in_thread(capped) as url, httpx.Client(base_url=url, timeout=60) as http:

        def run(command: dict[str, Any]) -> dict[str, Any]:
            headers = {"Authorization": f"Bearer {who}"}
            body = {"query": GQL_EDIT, "variables": {"c": command}}
            answer: dict[str, Any] = http.post("/graphql", json=body, headers=headers).json()
            return answer

        def docs() -> list[Any]:
            headers = {"Authorization": f"Bearer {who}"}
            answer = http.post("/graphql", json={"query": DOCS}, headers=headers).json()
            return sorted(answer["data"]["documents"]["items"], key=lambda d: d["id"])

        for i in range(4):
            path = f"/memories/d/f{i}.md"
            ok(run({"command": "CREATE", "path": path, "fileText": f"file {i}\n"}))
        before = docs()
        for command in (
            {"command": "RENAME", "oldPath": "/memories/d", "newPath": "/memories/e"},
            {"command": "DELETE", "path": "/memories/d"},
        ):
            refused = run(command)["errors"][0]
            assert refused["extensions"]["code"] == "QUOTA_EXCEEDED"
            assert refused["extensions"]["limit"] == "memoryDirMaxFiles"
            assert refused["extensions"]["allowed"] == 3
            assert docs() == before
        ok(run({"command": "DELETE", "path": "/memories/d/f3.md"}))
        ok(run({"command": "RENAME", "oldPath": "/memories/d", "newPath": "/memories/e"}))
        moved = sorted(d["path"] for d in docs() if d["path"] is not None)
        assert moved == ["/memories/e/f0.md", "/memories/e/f1.md", "/memories/e/f2.md"]
        ok(run({"command": "DELETE", "path": "/memories/e"}))
        assert [d for d in docs() if d["path"] is not None] == []
