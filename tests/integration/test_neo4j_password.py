"""The managed Neo4j's admin command takes any password, even one that begins with ``-``
(an install once stopped there with exit status 64)."""

from __future__ import annotations

import shutil
from pathlib import Path

from palimpsest.config import Settings
from palimpsest.local.neo4j.java import find_java
from palimpsest.local.neo4j.manager import set_initial_password


def test_a_password_with_a_leading_dash_is_set(tmp_path: Path) -> None:
    settings = Settings()
    installed = settings.neo4j_home
    assert (installed / "lib").is_dir(), "the managed Neo4j is installed by `make test`"
    home = tmp_path / "neo4j"
    (home / "conf").mkdir(parents=True)
    shutil.copy(installed / "conf" / "neo4j.conf", home / "conf" / "neo4j.conf")
    (home / "lib").symlink_to(installed / "lib")
    conf = home / "conf" / "neo4j.conf"
    # A scratch home of its own: the shared server's data directory is never touched.
    kept = [ln for ln in conf.read_text().splitlines() if "server.directories" not in ln]
    conf.write_text("\n".join(kept) + "\n")
    set_initial_password(find_java(settings).java, home, "-Zq9-looks-like-an-option")
    auth = home / "data" / "dbms" / "auth.ini"
    assert auth.read_text().startswith("neo4j:SHA-256,")
