"""The memory-file doors (``graphql.memory_files``) through the schema on the recording
executor: the field's arguments reach the command, its answer comes back shaped, and a
refusal is the error tree's code."""

from __future__ import annotations

from pathlib import Path

from tests.unit.graphql.doors import answer
from tests.unit.principals import principal
from tests.unit.recording import services
from tests.unit.resolvers.documents.test_memory_files import FILES, Tree, doc_id

VIEW = """query($scope: Scope!, $path: String!, $range: [Int!]) {
  memoryFile(scope: $scope, path: $path, viewRange: $range) { text path documentId }
}"""
EDIT = """mutation($scope: Scope!, $command: MemoryFileCommandInput!) {
  updateMemoryFile(scope: $scope, command: $command) { text path documentId }
}"""


async def test_a_file_view_names_its_document(tmp_path: Path) -> None:
    svc, recorder = services(Tree(dict(FILES)), tmp_path)
    data, errors = await answer(
        svc, principal(), VIEW, scope="USER", path="/memories/notes.md", range=[2, 2]
    )
    assert errors == []
    assert data is not None
    answered = data["memoryFile"]
    assert (answered["path"], answered["documentId"]) == (
        "/memories/notes.md",
        doc_id("/memories/notes.md"),
    )
    assert "second line" in answered["text"]
    assert "first line" not in answered["text"]  # the range reached the command
    assert len({c.params["scope_key"] for c in recorder.calls}) == 1


async def test_a_directory_has_no_document(tmp_path: Path) -> None:
    svc, _ = services(Tree(dict(FILES)), tmp_path)
    data, errors = await answer(svc, principal(), VIEW, scope="USER", path="/memories/projects")
    assert errors == []
    assert data is not None
    assert data["memoryFile"]["documentId"] is None


async def test_an_edits_fields_reach_the_command(tmp_path: Path) -> None:
    tree = Tree(dict(FILES))
    tree.stop = False  # the lock finds the document gone: a NOT_FOUND naming the new path
    svc, recorder = services(tree, tmp_path)
    command = {"command": "RENAME", "oldPath": "/memories/notes.md", "newPath": "/memories/n.md"}
    data, errors = await answer(svc, principal(), EDIT, scope="USER", command=command)
    assert data is None
    [error] = errors
    assert error["code"] == "NOT_FOUND"
    assert "/memories/n.md no longer exists" in error["message"]
    [locked] = [c for c in recorder.calls if c.name == "LOCK_DOCUMENT"]
    assert locked.params["id"] == doc_id("/memories/notes.md")


async def test_a_refused_command_is_invalid_argument_and_writes_nothing(tmp_path: Path) -> None:
    svc, recorder = services(Tree(dict(FILES)), tmp_path)
    command = {"command": "INSERT", "path": "/memories/notes.md", "insertText": "x"}
    _, errors = await answer(svc, principal(), EDIT, scope="USER", command=command)
    assert [(e["code"], e["message"]) for e in errors] == [
        ("INVALID_ARGUMENT", "Parameter `insert_line` is required for command: insert")
    ]
    assert not any(c.write for c in recorder.calls)


async def test_a_scope_the_token_lacks_is_forbidden(tmp_path: Path) -> None:
    svc, recorder = services(Tree(dict(FILES)), tmp_path)
    _, errors = await answer(svc, principal(), VIEW, scope="AGENT", path="/memories")
    assert [e["code"] for e in errors] == ["FORBIDDEN"]
    assert recorder.calls == []


async def test_no_token_no_file(tmp_path: Path) -> None:
    svc, recorder = services(Tree(dict(FILES)), tmp_path)
    _, errors = await answer(svc, None, VIEW, scope="USER", path="/memories/notes.md")
    assert [e["code"] for e in errors] == ["UNAUTHENTICATED"]
    assert recorder.calls == []


async def test_an_inserts_line_and_text_reach_the_command(tmp_path: Path) -> None:
    tree = Tree(dict(FILES))
    tree.stop = False  # the lock finds it gone meanwhile: the text is written as a new document
    svc, recorder = services(tree, tmp_path)
    command = {
        "command": "INSERT",
        "path": "/memories/notes.md",
        "insertLine": 1,
        "insertText": "middle",
    }
    data, errors = await answer(svc, principal(), EDIT, scope="USER", command=command)
    assert errors == []
    assert data is not None
    assert data["updateMemoryFile"]["text"] == "The file /memories/notes.md has been edited."
    [create] = [c.params for c in recorder.calls if c.name == "CREATE_DOCUMENT"]
    text = "".join(c["text"] + c["separator"] for c in create["chunks"])
    assert text.rstrip("\n") == "first line\nmiddle\nsecond line"
