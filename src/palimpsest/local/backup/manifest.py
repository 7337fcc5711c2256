"""A backup's ``manifest.json``: what was backed up, from which versions, every file's sha256.

The manifest is written last and atomically, so a folder without one is an unfinished backup
that ``restore`` refuses. ``verify`` checks every listed file (size and sha256) and that no
file is missing or unlisted, before a restore touches anything.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from palimpsest.errors import InvalidArgument

NAME = "manifest.json"
FORMAT = 1
_CHUNK = 1024 * 1024


@dataclass(frozen=True, slots=True)
class FileEntry:
    path: str  # relative to the backup folder, '/'-separated
    bytes: int
    sha256: str


@dataclass(frozen=True, slots=True)
class Manifest:
    format: int
    created_at: str
    palimpsest_version: str
    neo4j_version: str
    neo4j_database: str
    sql_backend: str  # "sqlite" or "postgres"
    postgres_version: str | None
    neo4j_stopped_seconds: float  # how long the managed server was down for the dump
    files: tuple[FileEntry, ...]

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def to_json(self) -> dict[str, Any]:
        body = asdict(self)
        body["total_bytes"] = self.total_bytes
        return body


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def entries(folder: Path) -> tuple[FileEntry, ...]:
    """Every file under ``folder`` except the manifest, sorted, with its size and hash."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if rel != NAME:
            found.append(FileEntry(rel, path.stat().st_size, sha256_file(path)))
    return tuple(found)


def write(folder: Path, manifest: Manifest) -> None:
    tmp = folder / f"{NAME}.tmp"
    tmp.write_text(json.dumps(manifest.to_json(), indent=2) + "\n")
    with tmp.open("rb") as f:
        os.fsync(f.fileno())
    os.replace(tmp, folder / NAME)


def digest(folder: Path) -> str:
    """The manifest's own sha256: names one backup in a restore journal."""
    return sha256_file(folder / NAME)


def read(folder: Path) -> Manifest:
    path = folder / NAME
    if not path.is_file():
        raise InvalidArgument(f"{folder} has no {NAME}: not a backup, or an unfinished one")
    try:
        body = json.loads(path.read_text())
        files = tuple(
            FileEntry(f["path"], int(f["bytes"]), str(f["sha256"])) for f in body["files"]
        )
        manifest = Manifest(
            format=int(body["format"]),
            created_at=str(body["created_at"]),
            palimpsest_version=str(body["palimpsest_version"]),
            neo4j_version=str(body["neo4j_version"]),
            neo4j_database=str(body["neo4j_database"]),
            sql_backend=str(body["sql_backend"]),
            postgres_version=body.get("postgres_version"),
            neo4j_stopped_seconds=float(body["neo4j_stopped_seconds"]),
            files=files,
        )
    except (ValueError, KeyError, TypeError) as e:
        raise InvalidArgument(f"{path} is not a valid manifest: {e}") from e
    if manifest.format != FORMAT:
        raise InvalidArgument(f"backup format {manifest.format} is not supported (want {FORMAT})")
    return manifest


def verify(folder: Path, manifest: Manifest) -> None:
    """Raise InvalidArgument unless the folder holds exactly the manifest's files, unchanged."""
    listed = {f.path: f for f in manifest.files}
    present = {
        p.relative_to(folder).as_posix()
        for p in folder.rglob("*")
        if p.is_file() and p.name != NAME
    }
    problems = [f"missing {p}" for p in sorted(listed.keys() - present)]
    problems += [f"unlisted {p}" for p in sorted(present - listed.keys())]
    for rel in sorted(listed.keys() & present):
        entry, path = listed[rel], folder / rel
        if path.stat().st_size != entry.bytes or sha256_file(path) != entry.sha256:
            problems.append(f"changed {rel}")
    if problems:
        raise InvalidArgument(f"backup {folder} fails verification: {'; '.join(problems)}")
