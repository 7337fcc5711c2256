"""Where SQLite scope databases live: ``<root>/<scope_key>.db`` plus an owner record.

A scope key is checked to be 32 lowercase hex characters before any path is built, so no
input can name another file. The owner record (``<scope_key>.json``: tenant, scope, owner)
is written before the database is created; admin listings read it to decide visibility.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope, ScopeRef
from palimpsest.sqlmem.core.base import DatabaseInfo

_KEY = re.compile(r"[0-9a-f]{32}")
# SQLite's companions of a database file; all go when a database is erased.
_COMPANIONS = ("-wal", "-shm", "-journal")


def check_key(key: str) -> str:
    if not _KEY.fullmatch(key):
        raise InvalidArgument("not a valid scope key")
    return key


def db_path(root: Path, key: str) -> Path:
    return root / f"{check_key(key)}.db"


def ensure_owner_record(root: Path, ref: ScopeRef) -> None:
    """Create the root (mode 700) and the owner record once, atomically."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    record = root / f"{check_key(ref.scope_key)}.json"
    if record.exists():
        return
    body = {"tenant_id": ref.tenant_id, "scope": ref.scope.value, "owner_id": ref.owner_id}
    tmp = record.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(body))
    os.replace(tmp, record)


def list_databases(root: Path) -> list[DatabaseInfo]:
    if not root.is_dir():
        return []
    found = []
    for path in sorted(root.glob("*.db")):
        key = path.stem
        if not _KEY.fullmatch(key):
            continue
        owner = _owner(root / f"{key}.json")
        try:
            size, stat = _bytes(path), path.stat()
        except FileNotFoundError:  # erased while listing
            continue
        found.append(
            DatabaseInfo(
                key=key,
                tenant_id=owner.get("tenant_id"),
                scope=Scope(owner["scope"]) if owner.get("scope") in Scope.__members__ else None,
                owner_id=owner.get("owner_id"),
                bytes=size,
                modified_at=datetime.fromtimestamp(stat.st_mtime, UTC),
            )
        )
    return found


def remove(root: Path, key: str) -> int | None:
    """Delete a database, its companions and its owner record; the bytes freed or None."""
    path = db_path(root, key)
    if not path.exists():
        (root / f"{key}.json").unlink(missing_ok=True)
        return None
    freed = _bytes(path)
    for p in [path, *(Path(f"{path}{s}") for s in _COMPANIONS), root / f"{key}.json"]:
        p.unlink(missing_ok=True)
    return freed


def _bytes(path: Path) -> int:
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def _owner(record: Path) -> dict[str, str]:
    try:
        data = json.loads(record.read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)}
