"""The jar lock and the Python installer, against a local file:// Maven layout (no network)."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local.neo4j import jars
from palimpsest.local.neo4j.jars import Jar, LockMismatch, fetch, lib_matches, parse_lock


def _lock_bytes(rows: list[dict[str, object]]) -> bytes:
    return json.dumps({"neo4j_version": "1.0", "browser_version": "1.0", "jars": rows}).encode()


def _row(group: str, artifact: str, data: bytes, classifier: str = "") -> dict[str, object]:
    return {
        "group": group,
        "artifact": artifact,
        "version": "1.0",
        "classifier": classifier,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }


JARS = {
    ("org.example", "core", ""): b"core jar bytes",
    ("org.example", "native", "linux-x86_64"): b"native jar bytes",
    ("io.other", "util", ""): b"util jar bytes" * 1000,
}


def _repository(root: Path, contents: dict[tuple[str, str, str], bytes]) -> str:
    for (group, artifact, classifier), data in contents.items():
        jar = Jar(group, artifact, "1.0", classifier, "0" * 64, 0)
        path = root / "/".join([*group.split("."), artifact, "1.0", jar.file_name])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root.as_uri()


def _lock() -> jars.Lock:
    return parse_lock(_lock_bytes([_row(g, a, d, c) for (g, a, c), d in JARS.items()]))


def test_fetch_installs_exactly_the_locked_jars(tmp_path: Path) -> None:
    repository = _repository(tmp_path / "repo", JARS)
    home = tmp_path / "home"
    fetch(_lock(), home, repository, say=lambda _: None)
    names = sorted(p.name for p in (home / "lib").iterdir())
    assert names == ["core-1.0.jar", "native-1.0-linux-x86_64.jar", "util-1.0.jar"]
    assert (home / "lib" / "util-1.0.jar").read_bytes() == JARS[("io.other", "util", "")]
    assert lib_matches(home, _lock())
    assert sorted(p.name for p in home.iterdir()) == ["lib", "lib.sha256"]


def test_a_tampered_jar_is_refused_and_nothing_is_half_installed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fetch(_lock(), home, _repository(tmp_path / "good", JARS), say=lambda _: None)
    before = {p.name: p.read_bytes() for p in (home / "lib").iterdir()}
    # The repository now serves other bytes for one jar: same size, different hash.
    evil = dict(JARS)
    evil[("org.example", "core", "")] = b"CORE JAR BYTES"
    with pytest.raises(LockMismatch, match=r"org\.example:core:1\.0 .*does not match the lock"):
        fetch(_lock(), home, _repository(tmp_path / "evil", evil), say=lambda _: None)
    assert {p.name: p.read_bytes() for p in (home / "lib").iterdir()} == before
    assert sorted(p.name for p in home.iterdir()) == ["lib", "lib.sha256"]  # no staging left


def test_a_missing_jar_fails_clearly_and_installs_nothing(tmp_path: Path) -> None:
    partial = {k: v for k, v in JARS.items() if k[1] != "util"}
    home = tmp_path / "home"
    with pytest.raises(Unavailable, match=r"could not download io\.other:util:1\.0"):
        fetch(_lock(), home, _repository(tmp_path / "repo", partial), say=lambda _: None)
    assert list(home.iterdir()) == []


def test_repository_must_be_https(tmp_path: Path) -> None:
    with pytest.raises(Unavailable, match="https://"):
        fetch(_lock(), tmp_path / "home", "http://mirror.invalid/maven2", say=lambda _: None)


def test_lib_matches_checks_names_sizes_and_hashes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fetch(_lock(), home, _repository(tmp_path / "repo", JARS), say=lambda _: None)
    (home / "lib.sha256").unlink()
    core = home / "lib" / "core-1.0.jar"
    core.write_bytes(b"CORE JAR BYTES")  # same size: only the hash tells
    assert not lib_matches(home, _lock())
    core.write_bytes(JARS[("org.example", "core", "")])
    assert lib_matches(home, _lock())
    (home / "lib" / "stray-2.0.jar").write_bytes(b"x")  # two versions on one class path
    assert not lib_matches(home, _lock())


@pytest.mark.parametrize(
    ("field", "value"),
    [("artifact", "../../etc"), ("group", "org/evil"), ("version", ".."), ("sha256", "abc")],
)
def test_lock_entries_cannot_reach_outside_the_repository_or_lib(field: str, value: str) -> None:
    row = _row("org.example", "core", b"x")
    row[field] = value
    with pytest.raises(ValueError, match="malformed lock entry"):
        parse_lock(_lock_bytes([row]))


def test_committed_lock_matches_the_pom_and_the_default_version() -> None:
    settings = Settings()
    lock = jars.load_lock(settings.neo4j.version)
    assert lock.browser_version == settings.neo4j.browser_version
    names = {jar.file_name for jar in lock.jars}
    assert f"neo4j-{settings.neo4j.version}.jar" in names  # what `status` calls installed
    assert f"neo4j-server-{settings.neo4j.version}.jar" in names
    assert f"neo4j-browser-{settings.neo4j.browser_version}.jar" in names
    pom = (jars.lock_path().parent / "pom.xml").read_text()
    assert f"<neo4j.version>{lock.neo4j_version}</neo4j.version>" in pom
    assert f"<neo4j.browser.version>{lock.browser_version}</neo4j.browser.version>" in pom
    assert len(lock.jars) > 200
    assert all(re.fullmatch(r"[0-9a-f]{64}", jar.sha256) for jar in lock.jars)


def test_other_version_than_the_lock_is_refused_with_the_way_out() -> None:
    with pytest.raises(Unavailable, match="palimpsest neo4j lock"):
        jars.load_lock("1999.01.0")


def test_maven_listing_is_parsed_with_classifiers(tmp_path: Path) -> None:
    a = tmp_path / "a.jar"
    a.write_bytes(b"aaa")
    b = tmp_path / "b.jar"
    b.write_bytes(b"bbbb")
    listing = (
        "\nThe following files have been resolved:\n"
        f"   org.neo4j:neo4j:jar:2026.09.0:compile:{a} -- module org.neo4j.community [auto]\n"
        f"   io.netty:netty-epoll:jar:linux-x86_64:4.2.18.Final:runtime:{b} -- module x\n"
        "   org.neo4j:parent:pom:2026.09.0:import\n"
    )
    rows = jars._parse_listing(listing)
    assert rows == [
        {
            "group": "org.neo4j",
            "artifact": "neo4j",
            "version": "2026.09.0",
            "classifier": "",
            "sha256": hashlib.sha256(b"aaa").hexdigest(),
            "size": 3,
        },
        {
            "group": "io.netty",
            "artifact": "netty-epoll",
            "version": "4.2.18.Final",
            "classifier": "linux-x86_64",
            "sha256": hashlib.sha256(b"bbbb").hexdigest(),
            "size": 4,
        },
    ]
