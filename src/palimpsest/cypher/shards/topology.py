"""The shard list (``PALIMPSEST_NEO4J_SHARDS``): which Neo4j servers hold whole tenants.

The setting is a JSON list, or the path of a file holding one (so passwords need not sit in
the environment): ``[{"name": "a", "uri": "bolt://db-a:7687", "user": "neo4j", "password":
"..."}, ...]``; ``password_file`` may replace ``password``. ``PALIMPSEST_NEO4J_DIRECTORY_SHARD``
names the shard that keeps the directory (tenant -> shard) and GLOBAL; unset, the first
listed. Unset, there is one server (``PALIMPSEST_NEO4J_URI``) and none of this runs.

A shard's name is what the directory records, so it is the stable part: a server may move
to another URI under the same name, and a name may never be reused for other data.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import orjson

from palimpsest.config import Settings
from palimpsest.errors import Unavailable

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
_KEYS = frozenset({"name", "uri", "user", "password", "password_file"})


@dataclass(frozen=True, slots=True)
class ShardSpec:
    name: str
    uri: str
    user: str
    password: str = ""

    def auth(self) -> tuple[str, str]:
        return self.user, self.password

    def __repr__(self) -> str:  # never the password, whoever logs a spec
        return f"ShardSpec(name={self.name!r}, uri={self.uri!r}, user={self.user!r})"


@dataclass(frozen=True, slots=True)
class Topology:
    """The configured shards, in the order listed, and the designated one."""

    shards: tuple[ShardSpec, ...]
    designated: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.shards)


def topology(settings: Settings) -> Topology | None:
    """The configured shards, or None for one server; refuses a bad list in one line."""
    secret = settings.neo4j.shards
    raw = secret.get_secret_value().strip() if secret is not None else ""
    if not raw:
        return None
    text = raw if raw.startswith("[") else _read(Path(raw).expanduser())
    try:
        entries = orjson.loads(text)
    except orjson.JSONDecodeError as e:
        raise _refused(f"is not a JSON list ({e.msg})") from None
    if not isinstance(entries, list) or not entries:
        raise _refused("must list at least one shard")
    shards = tuple(_spec(e, i) for i, e in enumerate(entries))
    names = [s.name for s in shards]
    if len(set(names)) != len(names):
        raise _refused("names a shard twice")
    designated = settings.neo4j.directory_shard or names[0]
    if designated not in names:
        raise Unavailable(
            f"PALIMPSEST_NEO4J_DIRECTORY_SHARD names {designated!r}, which "
            f"PALIMPSEST_NEO4J_SHARDS does not list ({', '.join(names)})"
        )
    return Topology(shards, designated)


def _spec(entry: object, i: int) -> ShardSpec:
    if not isinstance(entry, dict) or not all(isinstance(k, str) for k in entry):
        raise _refused(f"entry {i} is not an object")
    if unknown := sorted(set(entry) - _KEYS):
        raise _refused(f"entry {i} has unknown keys {unknown}")
    name, uri = entry.get("name"), entry.get("uri")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _refused(
            f"entry {i}: name must be 1-32 of a-z, 0-9, _ and - (a letter or digit first)"
        )
    if not isinstance(uri, str) or not uri.startswith(
        ("bolt://", "bolt+s://", "neo4j://", "neo4j+s://")
    ):
        raise _refused(f"shard {name}: uri must be a bolt:// or neo4j:// URI")
    user = entry.get("user", "neo4j")
    password = entry.get("password")
    if "password_file" in entry:
        if password is not None:
            raise _refused(f"shard {name}: give password or password_file, not both")
        path = entry["password_file"]
        if not isinstance(path, str):
            raise _refused(f"shard {name}: password_file must be a path")
        password = _read(Path(path).expanduser()).strip()
    if not isinstance(user, str) or not isinstance(password, str) or not password:
        raise _refused(f"shard {name}: needs a user and a password (or password_file)")
    return ShardSpec(name, uri, user, password)


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError as e:
        raise _refused(f"names a file that cannot be read ({path}: {e.strerror})") from None


def _refused(why: str) -> Unavailable:
    return Unavailable(f"PALIMPSEST_NEO4J_SHARDS {why}")
