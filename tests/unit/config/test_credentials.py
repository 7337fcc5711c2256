"""``Settings``' credentials and connection info: configured, or the managed servers'
generated passwords under ``home``; a missing one is ``Unavailable`` naming both ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local import neo4j as neo4j_local
from palimpsest.local import postgres as postgres_local


def bare(home: Path, **more: object) -> Settings:
    """Settings under ``home``, without the environment's passwords unless ``more`` names them."""
    fields: dict[str, object] = {"neo4j_password": None, "postgres_password": None, **more}
    return Settings(home=home, **fields)  # type: ignore[arg-type]


def test_configured_passwords_win_over_the_managed_files(tmp_path: Path) -> None:
    s = bare(tmp_path, neo4j_user="ada", neo4j_password="n-secret", postgres_password="p-secret")
    s.neo4j_password_file.parent.mkdir(parents=True)
    s.neo4j_password_file.write_text("generated\n")
    assert s.neo4j_credentials() == ("ada", "n-secret")
    assert s.postgres_credentials() == (s.sql.postgres_user, "p-secret")


def test_the_managed_servers_generated_passwords_are_read_from_home(tmp_path: Path) -> None:
    s = bare(tmp_path, neo4j_user="ignored")
    for path, secret in ((s.neo4j_password_file, "n-gen"), (s.postgres_password_file, "p-gen")):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{secret}\n")
    assert s.neo4j_password_file == tmp_path / "neo4j" / s.neo4j.version / "password"
    assert s.postgres_password_file == tmp_path / "postgres" / "password"
    # The managed Neo4j's user is always neo4j: the generated password is that user's.
    assert s.neo4j_credentials() == ("neo4j", "n-gen")
    assert s.postgres_credentials() == (s.sql.postgres_user, "p-gen")


def test_a_missing_password_is_unavailable_and_says_how_to_get_one(tmp_path: Path) -> None:
    s = bare(tmp_path)
    with pytest.raises(Unavailable, match=r"PALIMPSEST_NEO4J_PASSWORD.*neo4j install"):
        s.neo4j_credentials()
    with pytest.raises(Unavailable, match=r"PALIMPSEST_POSTGRES_PASSWORD.*postgres start"):
        s.postgres_conninfo()


def test_conninfo_names_the_admin_role_and_the_chosen_database(tmp_path: Path) -> None:
    s = bare(
        tmp_path,
        postgres_password="p",
        postgres_host="db",
        postgres_port=6000,
        postgres_user="ada",
        postgres_database="mem",
    )
    assert s.postgres_conninfo() == {
        "host": "db",
        "port": 6000,
        "dbname": "mem",
        "user": "ada",
        "password": "p",
        "connect_timeout": 5,
    }
    assert s.postgres_conninfo("postgres")["dbname"] == "postgres"


def test_the_managed_servers_old_functions_answer_the_same(tmp_path: Path) -> None:
    s = bare(tmp_path, neo4j_password="n", postgres_password="p")
    assert neo4j_local.credentials(s) == s.neo4j_credentials()
    assert postgres_local.credentials(s) == s.postgres_credentials()
    assert postgres_local.conninfo(s, "x") == s.postgres_conninfo("x")
