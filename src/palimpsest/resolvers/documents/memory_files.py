"""Memory as files (docs/reference/memory-files.md): the command set of Claude's memory tool
over a ``/memories`` tree whose files are the scope's documents.

A file is the live document whose ``path`` is the file's path; a directory is every file below
it (there are no empty directories). Every write is a document revision, so a file keeps its
history: ``create`` imports, ``str_replace`` and ``insert`` re-import the new text to the same
path, ``rename`` writes a revision with the new path (the same document, the same history),
``delete`` writes the tombstone. Paths are checked by ``memory_paths.canonical`` before
anything is read, and every refusal is a coded error whose message is the memory tool's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from palimpsest.cypher import memory_files as q
from palimpsest.cypher import revisions as rq
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.domain.documents import markdown, revisions
from palimpsest.domain.documents.revisions import Content, Target
from palimpsest.domain.notes import memory_paths as mp
from palimpsest.errors import Conflict, InvalidArgument, NotFound, QuotaExceeded
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers.documents import catalog as documents
from palimpsest.resolvers.documents import importing as document_import
from palimpsest.resolvers.documents import revisions as document_revisions
from palimpsest.resolvers.services import Services

MAX_LISTED_FILES = 1000  # a directory view lists at most these
# Files a directory rename or delete writes per transaction: a batch's revisions commit
# together, and no transaction grows with the directory.
BATCH_FILES = 50


class Command(StrEnum):
    VIEW = "view"
    CREATE = "create"
    STR_REPLACE = "str_replace"
    INSERT = "insert"
    DELETE = "delete"
    RENAME = "rename"


@dataclass(frozen=True, slots=True)
class MemoryCommand:
    """One command as the memory tool sends it (the fields its command names are required)."""

    command: str
    path: str | None = None
    view_range: tuple[int, ...] | None = None
    file_text: str | None = None
    old_str: str | None = None
    new_str: str | None = None
    insert_line: int | None = None
    insert_text: str | None = None
    old_path: str | None = None
    new_path: str | None = None


@dataclass(frozen=True, slots=True)
class MemoryAnswer:
    text: str  # what the memory tool shows the model
    path: str | None = None  # the canonical path the command ended at
    document_id: str | None = None  # the file's document (None for a directory)


@dataclass(frozen=True, slots=True)
class _Files:
    """The scope's view of the tree: which documents are files, at which paths."""

    svc: Services
    who: Principal
    scope: Scope

    async def file(self, path: str) -> str | None:
        ref = resolve_scope(self.who, self.scope)
        rows = await self.svc.db.scoped(ref).read(rq.FIND_BY_PATH, {"path": path})
        return str(rows[0]["id"]) if rows else None

    async def below(self, path: str, most: int = MAX_LISTED_FILES) -> dict[str, str]:
        """Files below directory ``path`` (``most`` of them at most): path to document id."""
        prefix = path + "/"
        found: dict[str, str] = {}
        after: str | None = None
        while True:
            limit = min(documents.MAX_LIST_LIMIT, most - len(found))
            page = await documents.list_documents(
                self.svc, self.who, self.scope, prefix, limit, after
            )
            for d in page.items:
                if d.path is not None:
                    found.setdefault(d.path, d.id)
            if page.cursor is None or len(found) >= most:
                return found
            after = page.cursor

    async def all_below(self, path: str) -> dict[str, str]:
        """Every file below directory ``path``, for a rename or delete of all of them: more
        than ``memory_dir_max_files`` is refused before anything changes."""
        allowed = self.svc.settings.limits.memory_dir_max_files
        found = await self.below(path, allowed + 1)
        if len(found) > allowed:
            raise QuotaExceeded(
                f"The directory holds more than {allowed} files (memoryDirMaxFiles); "
                "rename or delete its subdirectories one by one",
                limit="memoryDirMaxFiles",
                allowed=allowed,
            )
        return found

    async def sizes(self, path: str) -> dict[str, int]:
        """Every file below directory ``path`` (relative to it): its size in bytes."""
        ref = resolve_scope(self.who, self.scope)
        params = {"prefix": path + "/", "limit": MAX_LISTED_FILES}
        found: dict[str, int] = {}
        for row in await self.svc.db.scoped(ref).read(q.LIST_FILES, params):
            pairs = [(text, separator) for text, separator in row["pieces"]]
            text = markdown.export(row["preamble"] or "", pairs)
            found.setdefault(row["path"][len(path) + 1 :], len(text.encode("utf-8")))
        return found

    async def read(self, doc_id: str, path: str) -> str:
        doc = await documents.get_document(self.svc, self.who, self.scope, doc_id)
        if doc is None:
            raise NotFound(
                f"The file {path} no longer exists (may have been deleted or renamed concurrently)."
            )
        return documents.export_markdown(doc)

    async def write(self, path: str, text: str) -> str:
        """Write ``text`` to ``path``: a new document, or a revision of the one there."""
        doc = await document_import.import_document(
            self.svc, self.who, self.scope, text, mp.name_of(path), path, None
        )
        return doc.summary.id

    async def check_parents(self, path: str) -> None:
        for above in mp.ancestors(path):
            if await self.file(above) is not None:
                raise Conflict(f"The path {above} is a file, not a directory")


async def run(svc: Services, who: Principal, scope: Scope, cmd: MemoryCommand) -> MemoryAnswer:
    """Run one memory-tool command in ``scope`` (resolved first, as for every operation)."""
    resolve_scope(who, scope)
    files = _Files(svc, who, scope)
    try:
        command = Command(cmd.command)
    except ValueError:
        names = ", ".join(c.value for c in Command)
        raise InvalidArgument(f"Unknown command: {cmd.command}; use one of {names}") from None
    if command is Command.RENAME:
        return await _rename(
            files, _given(cmd.old_path, "old_path"), _given(cmd.new_path, "new_path")
        )
    given = _given(cmd.path, "path")
    path = mp.canonical(given)
    if command is Command.VIEW:
        return await _view(files, given, path, _view_range(cmd.view_range))
    if command is Command.CREATE:
        return await _create(files, given, path, _given(cmd.file_text, "file_text"))
    if command is Command.DELETE:
        return await _delete(files, given, path)
    doc_id = await files.file(path)
    if doc_id is None:
        if path == mp.ROOT or await files.below(path):
            raise InvalidArgument(f"The path {given} is not a file.")
        raise NotFound(f"The path {given} does not exist. Please provide a valid path.")
    content = await files.read(doc_id, given)
    if command is Command.STR_REPLACE:
        old = _given(cmd.old_str, "old_str")
        new_content, line = mp.replaced(given, content, old, cmd.new_str or "")
        written = await files.write(path, new_content)
        return MemoryAnswer(mp.edit_snippet(new_content, line), path, written)
    line_no = cmd.insert_line
    if line_no is None:
        raise InvalidArgument("Parameter `insert_line` is required for command: insert")
    new_content = mp.inserted(content, line_no, _given(cmd.insert_text, "insert_text"))
    written = await files.write(path, new_content)
    return MemoryAnswer(f"The file {given} has been edited.", path, written)


def _given(value: str | None, name: str) -> str:
    if value is None:
        raise InvalidArgument(f"Parameter `{name}` is required for this command")
    return value


def _view_range(value: tuple[int, ...] | None) -> tuple[int, int] | None:
    if value is None:
        return None
    if len(value) != 2:
        raise InvalidArgument("`view_range` must be two integers: [start, end]")
    return value[0], value[1]


async def _view(
    files: _Files, given: str, path: str, view_range: tuple[int, int] | None
) -> MemoryAnswer:
    doc_id = await files.file(path) if path != mp.ROOT else None
    if doc_id is not None:
        content = await files.read(doc_id, given)
        return MemoryAnswer(mp.file_view(given, content, view_range), path, doc_id)
    sizes = await files.sizes(path)
    if not sizes and path != mp.ROOT:
        raise NotFound(f"The path {given} does not exist. Please provide a valid path.")
    return MemoryAnswer(mp.directory_view(path, sizes), path)


async def _create(files: _Files, given: str, path: str, text: str) -> MemoryAnswer:
    if path == mp.ROOT or await files.file(path) is not None:
        raise Conflict(f"File {given} already exists")
    if await files.below(path):
        raise Conflict(f"The path {given} is a directory")
    await files.check_parents(path)
    doc_id = await files.write(path, text)
    return MemoryAnswer(f"File created successfully at: {given}", path, doc_id)


async def _delete(files: _Files, given: str, path: str) -> MemoryAnswer:
    if path == mp.ROOT:
        raise InvalidArgument("Cannot delete the /memories directory itself")
    doc_id = await files.file(path)
    targets = [doc_id] if doc_id is not None else list((await files.all_below(path)).values())
    if not targets:
        raise NotFound(f"The path {given} does not exist")
    for i in range(0, len(targets), BATCH_FILES):
        # One missing is deleted meanwhile: what was asked holds.
        batch = targets[i : i + BATCH_FILES]
        await documents.delete_documents(files.svc, files.who, files.scope, batch)
    return MemoryAnswer(f"Successfully deleted {given}", path, doc_id)


async def _rename(files: _Files, given_old: str, given_new: str) -> MemoryAnswer:
    old, new = mp.canonical(given_old), mp.canonical(given_new)
    if old == mp.ROOT:
        raise InvalidArgument("Cannot rename the /memories directory itself")
    if new == mp.ROOT or await files.file(new) is not None or await files.below(new):
        raise Conflict(f"The destination {given_new} already exists")
    if new.startswith(old + "/"):
        raise InvalidArgument(f"Cannot move {given_old} into itself")
    doc_id = await files.file(old)
    moves = {old: doc_id} if doc_id is not None else await files.all_below(old)
    if not moves:
        raise NotFound(f"The path {given_old} does not exist")
    await files.check_parents(new)
    pairs = [(target, new + from_path[len(old) :]) for from_path, target in moves.items()]
    for i in range(0, len(pairs), BATCH_FILES):
        await _move(files, pairs[i : i + BATCH_FILES])
    return MemoryAnswer(f"Successfully renamed {given_old} to {given_new}", new, doc_id)


async def _move(files: _Files, moves: Sequence[tuple[str, str]]) -> None:
    """Per (document, path): a revision of the document that changes its path (and title)
    and no chunk; all of them in one transaction."""
    svc = files.svc
    ref = resolve_scope(files.who, files.scope)

    async def work(tx: ScopedTx) -> None:
        for doc_id, path in moves:
            await _move_one(tx, files, doc_id, path)

    await svc.db.scoped(ref).write_tx(work)


async def _move_one(tx: ScopedTx, files: _Files, doc_id: str, path: str) -> None:
    svc = files.svc
    locked = await document_revisions.lock(tx, svc, doc_id)
    if locked is None or locked["document"]["deleted_at"] is not None:
        raise NotFound(f"The path {path} no longer exists (deleted or renamed concurrently)")
    rows = await tx.run(rq.READ_CURRENT, {"id": doc_id, "gap": revisions.SEQ_GAP})
    index = {r["id"]: i for i, r in enumerate(rows)}
    targets = [
        Target(
            Content(r["type"], r["text"], r["separator"], r["level"], r["language"]),
            index.get(r["parent_id"]) if r["parent_id"] is not None else None,
            r["id"],
            int(r["seq"]),
        )
        for r in rows
    ]
    doc = locked["document"]
    await document_revisions.write_revision(
        tx, svc, files.who, locked, targets, {}, doc["preamble"] or "", mp.name_of(path), path
    )
