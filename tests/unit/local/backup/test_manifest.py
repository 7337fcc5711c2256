"""A backup's manifest (``local.backup.manifest``): written last and read back, and the
verification that refuses a folder whose files are missing, unlisted or changed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.local.backup import manifest
from palimpsest.local.backup.manifest import FORMAT, NAME, FileEntry, Manifest


def backup(folder: Path) -> Manifest:
    (folder / "neo4j").mkdir(parents=True)
    (folder / "neo4j" / "neo4j.dump").write_bytes(b"dump" * 10)
    (folder / "sql.tar").write_bytes(b"sql")
    made = Manifest(
        format=FORMAT,
        created_at="2026-12-07T20:00:00+00:00",
        palimpsest_version="1.2.3",
        neo4j_version="5.26.0",
        neo4j_database="neo4j",
        sql_backend="sqlite",
        postgres_version=None,
        neo4j_stopped_seconds=1.5,
        files=manifest.entries(folder),
    )
    manifest.write(folder, made)
    return made


def test_the_entries_list_every_file_but_the_manifest_with_size_and_hash(tmp_path: Path) -> None:
    made = backup(tmp_path)
    assert made.files == (
        FileEntry("neo4j/neo4j.dump", 40, hashlib.sha256(b"dump" * 10).hexdigest()),
        FileEntry("sql.tar", 3, hashlib.sha256(b"sql").hexdigest()),
    )
    assert manifest.entries(tmp_path) == made.files  # the manifest itself is not listed
    assert made.total_bytes == 43


def test_a_written_manifest_reads_back_and_names_the_total(tmp_path: Path) -> None:
    made = backup(tmp_path)
    assert manifest.read(tmp_path) == made
    body = json.loads((tmp_path / NAME).read_text())
    assert body["total_bytes"] == 43
    assert not (tmp_path / f"{NAME}.tmp").exists()
    assert manifest.digest(tmp_path) == hashlib.sha256((tmp_path / NAME).read_bytes()).hexdigest()
    manifest.verify(tmp_path, made)  # unchanged: passes


def test_a_folder_without_a_manifest_is_an_unfinished_backup(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgument, match=r"has no manifest\.json"):
        manifest.read(tmp_path)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("not json", "is not a valid manifest"),
        ('{"format": 1}', "is not a valid manifest"),
        ('{"format": 1, "files": [{"path": "x"}]}', "is not a valid manifest"),
    ],
)
def test_a_broken_manifest_is_refused(tmp_path: Path, body: str, message: str) -> None:
    (tmp_path / NAME).write_text(body)
    with pytest.raises(InvalidArgument, match=message):
        manifest.read(tmp_path)


def test_another_format_is_refused(tmp_path: Path) -> None:
    backup(tmp_path)
    body = json.loads((tmp_path / NAME).read_text())
    (tmp_path / NAME).write_text(json.dumps({**body, "format": FORMAT + 1}))
    with pytest.raises(InvalidArgument, match=f"backup format {FORMAT + 1} is not supported"):
        manifest.read(tmp_path)


def test_verification_names_every_missing_unlisted_and_changed_file(tmp_path: Path) -> None:
    made = backup(tmp_path)
    (tmp_path / "sql.tar").unlink()
    (tmp_path / "stray.txt").write_text("?")
    (tmp_path / "neo4j" / "neo4j.dump").write_bytes(b"dump" * 9 + b"DUMP")  # same size
    with pytest.raises(InvalidArgument) as caught:
        manifest.verify(tmp_path, made)
    assert caught.value.message.endswith(
        "fails verification: missing sql.tar; unlisted stray.txt; changed neo4j/neo4j.dump"
    )
