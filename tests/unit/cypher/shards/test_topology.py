"""The shard list: parsed from JSON or a file, refused in one line when it is wrong."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from palimpsest.config import Settings
from palimpsest.cypher.shards import topology
from palimpsest.errors import Unavailable

A = {"name": "a", "uri": "bolt://127.0.0.1:7711", "user": "neo4j", "password": "pa"}
B = {"name": "b", "uri": "neo4j://db-b:7687", "password": "pb"}


def settings(tmp_path: Path, shards: Any, **more: Any) -> Settings:
    raw = shards if isinstance(shards, str) else orjson.dumps(shards).decode()
    return Settings(home=tmp_path, neo4j_shards=raw, **more)


def test_unset_is_one_server(tmp_path: Path) -> None:
    assert topology(Settings(home=tmp_path)) is None
    assert topology(settings(tmp_path, "  ")) is None


def test_a_json_list_names_the_shards_and_the_first_is_designated(tmp_path: Path) -> None:
    found = topology(settings(tmp_path, [A, B]))
    assert found is not None
    assert found.names == ("a", "b")
    assert found.designated == "a"
    assert found.shards[1].auth() == ("neo4j", "pb"), "user defaults to neo4j"
    assert "pa" not in repr(found), "a spec's repr never shows its password"


def test_a_file_holds_the_list_and_a_password_file_the_password(tmp_path: Path) -> None:
    (tmp_path / "pw").write_text("secret-b\n")
    listed = tmp_path / "shards.json"
    entry = {"name": "b", "uri": "bolt://x:1", "password_file": str(tmp_path / "pw")}
    listed.write_bytes(orjson.dumps([A, entry]))
    found = topology(settings(tmp_path, str(listed), neo4j_directory_shard="b"))
    assert found is not None
    assert found.designated == "b"
    assert found.shards[1].password == "secret-b"


@pytest.mark.parametrize(
    ("shards", "said"),
    [
        ("[", "is not a JSON list"),
        ([], "at least one shard"),
        ([A, A], "names a shard twice"),
        ([{**A, "name": "A B"}], "name must be"),
        ([{**A, "uri": "http://x"}], "uri must be"),
        ([{**A, "password": ""}], "needs a user and a password"),
        ([{**A, "port": 1}], "unknown keys ['port']"),
        ([{**A, "password_file": "/x"}], "not both"),
        ("/nonexistent/shards.json", "cannot be read"),
    ],
)
def test_a_bad_list_is_refused_in_one_line(tmp_path: Path, shards: Any, said: str) -> None:
    with pytest.raises(Unavailable) as refused:
        topology(settings(tmp_path, shards))
    assert said in refused.value.message
    assert "\n" not in refused.value.message
    assert "pa" not in refused.value.message.replace("password", "")


def test_the_designated_shard_must_be_listed(tmp_path: Path) -> None:
    with pytest.raises(Unavailable, match="PALIMPSEST_NEO4J_DIRECTORY_SHARD names 'c'"):
        topology(settings(tmp_path, [A, B], neo4j_directory_shard="c"))
