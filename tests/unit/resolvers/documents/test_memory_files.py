"""Memory as files (``resolvers.documents.memory_files``) on a recording executor: which
document each command reads or writes, and the memory tool's refusals, which write nothing.

The executor answers from a small tree of files (one chunk each); a write stops where its
first statement would lock or create a document, and the test reads what it was given."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.embedding import Vector
from palimpsest.errors import Conflict, InvalidArgument, NotFound, QuotaExceeded
from palimpsest.identity import Scope
from palimpsest.resolvers.documents import memory_files
from palimpsest.resolvers.documents.memory_files import MemoryAnswer, MemoryCommand
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal
from tests.unit.recording import NOW, services

WRITES = {"CREATE_DOCUMENT", "LOCK_DOCUMENT"}


class Stop(Exception):
    """Raised where a write would begin: the statement's name and parameters."""

    def __init__(self, name: str, params: dict[str, Any]) -> None:
        super().__init__(name)
        self.name = name
        self.params = params


def doc_id(path: str) -> str:
    return hashlib.sha256(path.encode()).hexdigest()[:32]


class Tree:
    """The scope's files (path to text), answered as the documents' statements would."""

    def __init__(self, files: dict[str, str], *, stop: bool = True) -> None:
        self.files = files
        self.stop = stop  # False: a locked document is gone (deleted meanwhile)

    def by_id(self) -> dict[str, str]:
        return {doc_id(p): p for p in self.files}

    def document(self, path: str) -> Row:
        return {
            "id": doc_id(path),
            "title": path.rsplit("/", 1)[-1],
            "path": path,
            "preamble": "",
            "created_at": NOW,
            "updated_at": NOW,
            "tenant_id": "acme",
            "revision": 1,
        }

    def chunk(self, path: str) -> Row:
        text = self.files[path]
        return {
            "id": "c" + doc_id(path)[1:],
            "document_id": doc_id(path),
            "type": "paragraph",
            "text": text,
            "separator": "",
            "level": None,
            "language": None,
            "position": 0,
            "index": 0,
            "revision": 1,
            "start_line": 1,
            "end_line": 1,
            "start_char": 0,
            "end_char": len(text),
            "observed_at": None,
            "created_at": NOW,
            "updated_at": NOW,
            "tenant_id": "acme",
        }

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        name = statement.name
        if name in WRITES:
            if self.stop:
                raise Stop(name, params)
            return []
        if name == "RAISE_QUOTA_COUNTERS":
            return [{"fits": True}]
        if name == "FIND_BY_PATH":
            return [{"id": doc_id(params["path"])}] if params["path"] in self.files else []
        if name == "LIST_DOCUMENTS":
            below = sorted(
                (doc_id(p), p)
                for p in self.files
                if p.startswith(params["path_prefix"]) and doc_id(p) > params["after"]
            )
            rows = [{"document": self.document(p), "chunk_count": 1} for _, p in below]
            return rows[: params["limit"]]
        if name == "LIST_FILES":
            return [
                {"id": doc_id(p), "path": p, "preamble": "", "pieces": [[t, ""]]}
                for p, t in sorted(self.files.items())
                if p.startswith(params["prefix"])
            ]
        path = self.by_id().get(params.get("id", ""))
        if name == "GET_DOCUMENT":
            return [{"document": self.document(path)}] if path else []
        if name == "GET_DOCUMENT_CHUNKS":
            return [{"chunk": self.chunk(path), "parent_id": None}] if path else []
        return []


class RecordingEmbedder:
    model_name = "constant"
    dimensions = 4

    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.texts += texts
        return [Vector([1.0, 0.0, 0.0, 0.0]) for _ in texts]


FILES = {
    "/memories/notes.md": "first line\nsecond line",
    "/memories/projects/a.md": "alpha",
    "/memories/projects/deep/b.md": "beta!",
}


def tree(tmp_path: Path, files: dict[str, str] | None = None, **settings: Any) -> Any:
    answer = Tree(dict(FILES if files is None else files))
    svc, recorder = services(answer, tmp_path, **settings)
    embedder = RecordingEmbedder()
    return dataclasses.replace(svc, embedder=embedder), recorder, answer, embedder


async def run(svc: Services, **fields: Any) -> MemoryAnswer:
    return await memory_files.run(svc, principal(), Scope.USER, MemoryCommand(**fields))


async def test_viewing_a_file_numbers_its_lines_and_names_its_document(tmp_path: Path) -> None:
    svc, *_ = tree(tmp_path)
    got = await run(svc, command="view", path="/memories/notes.md")
    assert got.document_id == doc_id("/memories/notes.md")
    assert got.path == "/memories/notes.md"
    assert "     1\tfirst line\n     2\tsecond line" in got.text
    ranged = await run(svc, command="view", path="/memories/notes.md", view_range=(2, -1))
    assert "second line" in ranged.text
    assert "first line" not in ranged.text


async def test_viewing_a_directory_lists_two_levels_with_sizes(tmp_path: Path) -> None:
    svc, recorder, *_ = tree(tmp_path)
    got = await run(svc, command="view", path="/memories/projects")
    assert got.document_id is None
    # The sizes are the exported texts' bytes; a directory's is its files'.
    assert got.text.splitlines()[1:] == [
        "10B\t/memories/projects",
        "5B\t/memories/projects/a.md",
        "5B\t/memories/projects/deep/",
        "5B\t/memories/projects/deep/b.md",
    ]
    [files] = [c for c in recorder.calls if c.name == "LIST_FILES"]
    assert files.params["prefix"] == "/memories/projects/"


async def test_viewing_the_empty_root_answers_but_a_missing_path_is_not_found(
    tmp_path: Path,
) -> None:
    svc, *_ = tree(tmp_path, {})
    assert (await run(svc, command="view", path="/memories")).path == "/memories"
    with pytest.raises(NotFound, match="The path /memories/x does not exist"):
        await run(svc, command="view", path="/memories/x")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"command": "shred", "path": "/memories/a"}, "Unknown command: shred; use one of view, "),
        ({"command": "view"}, "Parameter `path` is required"),
        ({"command": "create", "path": "/memories/a"}, "Parameter `file_text` is required"),
        ({"command": "rename", "old_path": "/memories/a"}, "Parameter `new_path` is required"),
        ({"command": "view", "path": "/memories", "view_range": (1, 2, 3)}, "two integers"),
        ({"command": "delete", "path": "/memories"}, "Cannot delete the /memories directory"),
        ({"command": "str_replace", "path": "/memories/projects", "old_str": "a"}, "not a file"),
        ({"command": "insert", "path": "/memories/notes.md"}, "`insert_line` is required"),
        (
            {"command": "rename", "old_path": "/memories", "new_path": "/memories/x"},
            "Cannot rename the /memories directory itself",
        ),
        (
            {"command": "rename", "old_path": "/memories/p", "new_path": "/memories/p/q"},
            "Cannot move /memories/p into itself",
        ),
    ],
)
async def test_a_bad_command_is_refused_and_writes_nothing(
    tmp_path: Path, fields: dict[str, Any], message: str
) -> None:
    svc, recorder, *_ = tree(tmp_path)
    with pytest.raises(InvalidArgument, match=message.replace("(", r"\(")):
        await run(svc, **fields)
    assert not any(c.write for c in recorder.calls)


@pytest.mark.parametrize(
    ("fields", "error", "message"),
    [
        ({"path": "/memories/notes.md"}, Conflict, "File /memories/notes.md already exists"),
        ({"path": "/memories"}, Conflict, "File /memories already exists"),
        ({"path": "/memories/projects"}, Conflict, "The path /memories/projects is a directory"),
        ({"path": "/memories/notes.md/x"}, Conflict, "/memories/notes.md is a file, not a dir"),
    ],
)
async def test_create_refuses_a_taken_path(
    tmp_path: Path, fields: dict[str, Any], error: type[Exception], message: str
) -> None:
    svc, recorder, *_ = tree(tmp_path)
    with pytest.raises(error, match=message):
        await run(svc, command="create", file_text="x", **fields)
    assert not any(c.write for c in recorder.calls)


async def test_create_imports_a_new_document_at_the_canonical_path(tmp_path: Path) -> None:
    svc, _, _, embedder = tree(tmp_path)
    with pytest.raises(Stop) as caught:
        await run(svc, command="create", path="/memories/new.md/", file_text="hello there")
    assert caught.value.name == "CREATE_DOCUMENT"
    assert caught.value.params["path"] == "/memories/new.md"
    assert caught.value.params["title"] == "new.md"
    assert embedder.texts == ["hello there"]


async def test_str_replace_writes_a_revision_of_the_same_document(tmp_path: Path) -> None:
    svc, _, _, embedder = tree(tmp_path)
    with pytest.raises(Stop) as caught:
        await run(
            svc,
            command="str_replace",
            path="/memories/notes.md",
            old_str="second",
            new_str="2nd",
        )
    assert caught.value.name == "LOCK_DOCUMENT"
    assert caught.value.params["id"] == doc_id("/memories/notes.md")
    assert any("2nd line" in text for text in embedder.texts)
    assert not any("second line" in text for text in embedder.texts)


async def test_insert_writes_the_text_after_the_line(tmp_path: Path) -> None:
    svc, _, _, embedder = tree(tmp_path)
    with pytest.raises(Stop) as caught:
        await run(
            svc, command="insert", path="/memories/notes.md", insert_line=1, insert_text="middle"
        )
    assert caught.value.params["id"] == doc_id("/memories/notes.md")
    assert any("first line\nmiddle\nsecond line" in text for text in embedder.texts)


async def test_editing_a_missing_file_is_not_found(tmp_path: Path) -> None:
    svc, recorder, *_ = tree(tmp_path)
    with pytest.raises(NotFound, match=re.escape("The path /memories/gone.md does not exist")):
        await run(svc, command="str_replace", path="/memories/gone.md", old_str="a")
    assert not any(c.write for c in recorder.calls)


async def test_deleting_a_file_deletes_its_document(tmp_path: Path) -> None:
    svc, *_ = tree(tmp_path)
    with pytest.raises(Stop) as caught:
        await run(svc, command="delete", path="/memories/notes.md")
    assert caught.value.name == "LOCK_DOCUMENT"
    assert caught.value.params["id"] == doc_id("/memories/notes.md")


async def test_deleting_a_directory_deletes_every_file_below_in_batches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_files, "BATCH_FILES", 1)
    svc, recorder, answer, _ = tree(tmp_path)
    answer.stop = False  # each one is gone meanwhile: what was asked holds
    got = await run(svc, command="delete", path="/memories/projects")
    assert got.text == "Successfully deleted /memories/projects"
    assert got.document_id is None
    locked = [c.params["id"] for c in recorder.calls if c.name == "LOCK_DOCUMENT"]
    below = {doc_id("/memories/projects/a.md"), doc_id("/memories/projects/deep/b.md")}
    assert set(locked) == below
    # One transaction per batch of one file.
    assert [t for t in recorder.transactions if "LOCK_DOCUMENT" in t] == [["LOCK_DOCUMENT"]] * 2


async def test_a_directory_over_the_file_cap_is_refused_before_any_write(tmp_path: Path) -> None:
    svc, recorder, *_ = tree(tmp_path, memory_dir_max_files=1)
    for fields in (
        {"command": "delete", "path": "/memories/projects"},
        {"command": "rename", "old_path": "/memories/projects", "new_path": "/memories/p2"},
    ):
        with pytest.raises(QuotaExceeded) as caught:
            await run(svc, **fields)
        assert caught.value.details == {"limit": "memoryDirMaxFiles", "allowed": 1}
    assert not any(c.write for c in recorder.calls)


async def test_deleting_or_renaming_nothing_is_not_found(tmp_path: Path) -> None:
    svc, recorder, *_ = tree(tmp_path)
    with pytest.raises(NotFound, match="The path /memories/none does not exist"):
        await run(svc, command="delete", path="/memories/none")
    with pytest.raises(NotFound, match="The path /memories/none does not exist"):
        await run(svc, command="rename", old_path="/memories/none", new_path="/memories/x")
    assert not any(c.write for c in recorder.calls)


@pytest.mark.parametrize("new_path", ["/memories/notes.md", "/memories/projects", "/memories"])
async def test_a_rename_onto_a_taken_path_conflicts(tmp_path: Path, new_path: str) -> None:
    svc, recorder, *_ = tree(tmp_path)
    with pytest.raises(Conflict, match=f"The destination {new_path} already exists"):
        await run(svc, command="rename", old_path="/memories/projects/a.md", new_path=new_path)
    assert not any(c.write for c in recorder.calls)


async def test_a_rename_moves_every_file_below_in_one_transaction(tmp_path: Path) -> None:
    svc, recorder, answer, _ = tree(tmp_path)
    answer.stop = False  # the first is gone meanwhile: the move names its new path
    with pytest.raises(NotFound) as caught:
        await run(svc, command="rename", old_path="/memories/projects", new_path="/memories/p2")
    [locked] = [c for c in recorder.calls if c.name == "LOCK_DOCUMENT"]
    assert locked.write
    old = Tree(FILES).by_id()[locked.params["id"]]
    new = "/memories/p2" + old.removeprefix("/memories/projects")
    assert (
        caught.value.message == f"The path {new} no longer exists (deleted or renamed concurrently)"
    )


async def test_a_rename_of_a_file_locks_that_document(tmp_path: Path) -> None:
    svc, *_ = tree(tmp_path)
    with pytest.raises(Stop) as caught:
        await run(svc, command="rename", old_path="/memories/notes.md", new_path="/memories/n.md")
    assert caught.value.params["id"] == doc_id("/memories/notes.md")
