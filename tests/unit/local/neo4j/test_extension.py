"""The extension's build steps that need no Neo4j: its version, the no-op rebuild, the pinned
compiler's check and the jar's layout (the real compile runs in
tests/integration/test_text_procedure.py)."""

from __future__ import annotations

import hashlib
import re
import zipfile
from pathlib import Path

import pytest

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local.neo4j import extension
from palimpsest.local.neo4j.conf import neo4j_conf
from palimpsest.local.neo4j.extension import builder as b
from palimpsest.local.neo4j.jars import LockMismatch


def test_the_java_source_reports_the_version_the_server_expects() -> None:
    [text_leg] = [p for p in b.sources() if p.name == "TextLeg.java"]
    found = re.search(r'String VERSION = "([^"]+)"', text_leg.read_text())
    assert found is not None
    assert found.group(1) == extension.VERSION


def _home(tmp_path: Path) -> Settings:
    settings = Settings(home=tmp_path, maven_repository_url="https://127.0.0.1:9/unused")
    lib = settings.neo4j_home / "lib"
    lib.mkdir(parents=True)
    (lib / "neo4j-kernel-api-1.jar").write_bytes(b"not a real jar")
    return settings


def test_a_jar_built_from_the_same_inputs_is_kept_without_fetching_or_compiling(
    tmp_path: Path,
) -> None:
    settings = _home(tmp_path)
    home = settings.neo4j_home
    digest = b._digest(b.sources(), sorted((home / "lib").glob("*.jar")))
    classes = tmp_path / "classes"
    (classes / "palimpsest").mkdir(parents=True)
    (classes / "palimpsest" / "X.class").write_bytes(b"\xca\xfe")
    target = extension.jar_path(home)
    target.parent.mkdir(parents=True)
    b._package(classes, target, digest)
    before = target.read_bytes()
    said: list[str] = []
    # The repository URL answers nothing: a fetch or a compile would raise.
    assert extension.build(settings, said.append) == target
    assert target.read_bytes() == before
    assert said == [f"the Palimpsest extension {extension.VERSION} is in {target}"]


def test_the_jar_names_its_version_and_build_digest_and_holds_the_classes(tmp_path: Path) -> None:
    classes = tmp_path / "classes"
    (classes / "palimpsest" / "extension").mkdir(parents=True)
    (classes / "palimpsest" / "extension" / "TextLeg.class").write_bytes(b"\xca\xfe\xba\xbe")
    jar = tmp_path / "x.jar"
    b._package(classes, jar, "d" * 64)
    with zipfile.ZipFile(jar) as zf:
        assert zf.namelist() == ["META-INF/MANIFEST.MF", "palimpsest/extension/TextLeg.class"]
        manifest = zf.read("META-INF/MANIFEST.MF").decode()
    assert f"Implementation-Version: {extension.VERSION}" in manifest
    assert b._built_digest(jar) == "d" * 64
    again = tmp_path / "y.jar"
    b._package(classes, again, "d" * 64)
    assert again.read_bytes() == jar.read_bytes()  # fixed entry times: reproducible


def test_a_changed_source_or_jar_changes_the_build_digest(tmp_path: Path) -> None:
    settings = _home(tmp_path)
    lib_jars = sorted((settings.neo4j_home / "lib").glob("*.jar"))
    first = b._digest(b.sources(), lib_jars)
    (settings.neo4j_home / "lib" / "neo4j-kernel-api-1.jar").write_bytes(b"another jar, longer")
    assert b._digest(b.sources(), lib_jars) != first


def test_building_without_the_neo4j_jars_is_refused(tmp_path: Path) -> None:
    with pytest.raises(Unavailable, match="no Neo4j jars"):
        extension.build(Settings(home=tmp_path), print)


def test_a_compiler_jar_other_than_the_pinned_one_is_refused(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    folder = repo / "org" / "eclipse" / "jdt" / "ecj" / extension.ECJ.version
    folder.mkdir(parents=True)
    (folder / extension.ECJ.file_name).write_bytes(b"x" * extension.ECJ.size)
    assert hashlib.sha256(b"x" * extension.ECJ.size).hexdigest() != extension.ECJ.sha256
    with pytest.raises(LockMismatch):
        b._ecj(tmp_path / "home", repo.as_uri(), print)
    assert not (tmp_path / "home" / "tools" / extension.ECJ.file_name).exists()


def test_the_configuration_lets_only_our_namespace_use_the_kernel_api() -> None:
    conf = neo4j_conf(Settings())
    assert "dbms.security.procedures.unrestricted=palimpsest.*" in conf.splitlines()
