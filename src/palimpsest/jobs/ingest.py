"""``palimpsest ingest``: Markdown files and folders into one scope, in batches, resumable.

Files go through ``importDocuments``' resolver in batches (up to ``batch`` documents and the
resolver's byte limit per call), each batch one transaction. A manifest under
``PALIMPSEST_HOME/ingest.db`` records, per scope owner and document path, the sha256 of the
imported text and the document id, written right after each batch commits. So a second run
skips files whose content did not change (and whose document still exists), a changed file
replaces its old document, and a run interrupted mid-way resumes where it stopped: the batch
that was cut off was all-or-nothing. (A crash between a commit and its manifest write, a few
milliseconds, would import that batch once more on the next run.)
"""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from palimpsest.errors import InvalidArgument, PalimpsestError
from palimpsest.identity import Principal, Scope, resolve_scope
from palimpsest.resolvers import documents
from palimpsest.resolvers.documents import DocumentDraft
from palimpsest.resolvers.services import Services

SUFFIXES = (".md", ".markdown")
LIST_PAGE = documents.MAX_LIST_LIMIT


@dataclass(frozen=True, slots=True)
class Source:
    file: Path
    path: str  # the document path: '/' + the file's path below the folder given


@dataclass(slots=True)
class Report:
    files: int = 0
    imported: int = 0
    replaced: int = 0
    unchanged: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    chunks: int = 0


Progress = Callable[[int, int], None]  # (files done, chunks written so far)


def find_sources(paths: Iterable[Path]) -> list[Source]:
    """Markdown files named or found under folders, in a stable order, each once."""
    found: dict[str, Source] = {}
    for given in paths:
        if given.is_dir():
            for file in sorted(p for p in given.rglob("*") if p.suffix.lower() in SUFFIXES):
                if file.is_file():
                    rel = file.relative_to(given).as_posix()
                    found.setdefault(f"/{rel}", Source(file, f"/{rel}"))
        elif given.is_file():
            found.setdefault(f"/{given.name}", Source(given, f"/{given.name}"))
        else:
            raise InvalidArgument(f"{given} is neither a file nor a folder")
    return list(found.values())


class Manifest:
    """What was imported, per scope owner and path: the text's sha256 and the document id."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS imported (owner TEXT, path TEXT, sha256 TEXT, "
            "document_id TEXT, PRIMARY KEY (owner, path))"
        )

    def get(self, owner: str, path: str) -> tuple[str, str] | None:
        row = self._db.execute(
            "SELECT sha256, document_id FROM imported WHERE owner = ? AND path = ?", (owner, path)
        ).fetchone()
        return (str(row[0]), str(row[1])) if row else None

    def record(self, owner: str, rows: list[tuple[str, str, str]]) -> None:
        with self._db:
            self._db.executemany(
                "INSERT OR REPLACE INTO imported VALUES (?, ?, ?, ?)",
                [(owner, path, digest, doc_id) for path, digest, doc_id in rows],
            )

    def close(self) -> None:
        self._db.close()


@dataclass(frozen=True, slots=True)
class _Pending:
    source: Source
    text: str
    digest: str
    previous: str | None  # the document this file's older content is in


async def ingest(
    svc: Services,
    who: Principal,
    scope: Scope,
    sources: list[Source],
    manifest: Manifest,
    batch: int,
    progress: Progress,
) -> Report:
    owner = resolve_scope(who, scope).scope_key
    existing = await _existing_ids(svc, who, scope)
    report = Report(files=len(sources))
    pending: list[_Pending] = []
    done = 0
    for source in sources:
        try:
            text = source.file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            report.failed.append((source.path, f"cannot read it as UTF-8 text: {e}"))
            done += 1
            continue
        digest = hashlib.sha256(text.encode()).hexdigest()
        known = manifest.get(owner, source.path)
        previous = known[1] if known and known[1] in existing else None
        if known is not None and known[0] == digest and previous is not None:
            report.unchanged += 1
            done += 1
            progress(done, report.chunks)
        else:
            pending.append(_Pending(source, text, digest, previous))
    for group in _batches(pending, batch):
        await _import_group(svc, who, scope, owner, group, manifest, report)
        done += len(group)
        progress(done, report.chunks)
    return report


def _batches(pending: list[_Pending], size: int) -> Iterator[list[_Pending]]:
    group: list[_Pending] = []
    used = 0
    limit = documents.MAX_BATCH_BYTES
    for item in pending:
        n = len(item.text.encode())
        if group and (len(group) >= size or used + n > limit):
            yield group
            group, used = [], 0
        group.append(item)
        used += n
    if group:
        yield group


async def _import_group(
    svc: Services,
    who: Principal,
    scope: Scope,
    owner: str,
    group: list[_Pending],
    manifest: Manifest,
    report: Report,
) -> None:
    drafts = [DocumentDraft(p.text, None, p.source.path) for p in group]
    try:
        docs = await documents.import_documents(svc, who, scope, drafts)
    except InvalidArgument as e:
        if len(group) == 1:
            report.failed.append((group[0].source.path, e.message))
            return
        # One bad file refuses its whole batch: import one by one to name it and keep the rest.
        for item in group:
            await _import_group(svc, who, scope, owner, [item], manifest, report)
        return
    manifest.record(
        owner, [(p.source.path, p.digest, d.summary.id) for p, d in zip(group, docs, strict=True)]
    )
    report.chunks += sum(d.summary.chunk_count for d in docs)
    for item, doc in zip(group, docs, strict=True):
        if item.previous is None:
            report.imported += 1
            continue
        # A re-import to the same path is a new revision of that document (same id); only a
        # document that moved paths leaves an old one to delete.
        if item.previous != doc.summary.id:
            with contextlib.suppress(PalimpsestError):  # already gone: nothing to replace
                await documents.delete_document(svc, who, scope, item.previous)
        report.replaced += 1


async def _existing_ids(svc: Services, who: Principal, scope: Scope) -> set[str]:
    """Ids of the scope's documents, so a manifest entry whose document is gone is re-imported."""
    ids: set[str] = set()
    after: str | None = None
    while True:
        page = await documents.list_documents(svc, who, scope, "/", LIST_PAGE, after)
        ids.update(d.id for d in page.items)
        if page.cursor is None:
            return ids
        after = page.cursor
