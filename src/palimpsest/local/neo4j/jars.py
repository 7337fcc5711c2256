"""The Neo4j jars: a committed lock file, fetched from a Maven repository in Python.

``neo4j-jars.lock.json`` beside this module names every jar of the server's class path with its
sha256. It is produced once by Maven from ``pom.xml`` (``palimpsest neo4j lock``, a maintainer
command); installing needs no Maven. ``fetch`` downloads exactly those files into a fresh folder
beside ``lib``, checks every size and hash, and only then swaps the folder in, so a failure
leaves no half-filled ``lib`` behind.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from palimpsest.errors import Unavailable
from palimpsest.local.fetching import transient

Say = Callable[[str], None]
LOCK_NAME = "neo4j-jars.lock.json"
STAMP_NAME = "lib.sha256"  # beside lib/: the lock digest lib/ was last verified against
_MAVEN_LIST = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1:list"
_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # no '/', no '..': safe in URLs and paths
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_WORKERS = 8
_TRIES = 3
_TIMEOUT_S = 60


class LockMismatch(Unavailable):
    """A downloaded jar is not the one the lock names; nothing was installed."""


@dataclass(frozen=True, slots=True)
class Jar:
    group: str
    artifact: str
    version: str
    classifier: str
    sha256: str
    size: int

    @property
    def file_name(self) -> str:
        suffix = f"-{self.classifier}" if self.classifier else ""
        return f"{self.artifact}-{self.version}{suffix}.jar"

    @property
    def coordinates(self) -> str:
        extra = f":{self.classifier}" if self.classifier else ""
        return f"{self.group}:{self.artifact}:{self.version}{extra}"

    def url(self, repository: str) -> str:
        path = "/".join([*self.group.split("."), self.artifact, self.version, self.file_name])
        return f"{repository.rstrip('/')}/{path}"


@dataclass(frozen=True, slots=True)
class Lock:
    neo4j_version: str
    browser_version: str
    jars: tuple[Jar, ...]
    digest: str  # sha256 of the lock file's bytes

    @property
    def total_bytes(self) -> int:
        return sum(jar.size for jar in self.jars)


def lock_path() -> Path:
    return Path(str(files("palimpsest.local.neo4j").joinpath(LOCK_NAME)))


def parse_lock(raw: bytes) -> Lock:
    """The lock, with every name and hash checked before any of it reaches a URL or a path."""
    data = json.loads(raw)
    jars: list[Jar] = []
    for row in data["jars"]:
        jar = Jar(
            row["group"],
            row["artifact"],
            row["version"],
            row.get("classifier", ""),
            row["sha256"],
            int(row["size"]),
        )
        parts = [jar.group, jar.artifact, jar.version] + ([jar.classifier] * bool(jar.classifier))
        if not all(_PART.match(p) for p in parts) or not _SHA256.match(jar.sha256):
            raise ValueError(f"malformed lock entry {row!r}")
        jars.append(jar)
    names = [jar.file_name for jar in jars]
    if len(set(names)) != len(names):
        raise ValueError("two lock entries share a file name")
    return Lock(
        data["neo4j_version"], data["browser_version"], tuple(jars), hashlib.sha256(raw).hexdigest()
    )


def load_lock(neo4j_version: str) -> Lock:
    lock = parse_lock(lock_path().read_bytes())
    if lock.neo4j_version != neo4j_version:
        raise Unavailable(
            f"the jar lock is for Neo4j {lock.neo4j_version}, not {neo4j_version}: set "
            f"PALIMPSEST_NEO4J_VERSION={lock.neo4j_version}, or refresh the lock with Maven "
            "(`palimpsest neo4j lock`)"
        )
    return lock


def lib_matches(home: Path, lock: Lock) -> bool:
    """True when ``home/lib`` holds exactly the locked jars (hashes checked once, then stamped)."""
    lib = home / "lib"
    if not lib.is_dir():
        return False
    present = {p.name: p.stat().st_size for p in lib.glob("*.jar")}
    if present != {jar.file_name: jar.size for jar in lock.jars}:
        return False
    stamp = home / STAMP_NAME
    if stamp.is_file() and stamp.read_text().strip() == lock.digest:
        return True
    if any(_sha256_file(lib / jar.file_name) != jar.sha256 for jar in lock.jars):
        return False
    stamp.write_text(lock.digest + "\n")
    return True


def fetch(lock: Lock, home: Path, repository: str, say: Say) -> None:
    """Download every locked jar into a new folder, verify all, then swap it in as ``lib``."""
    home.mkdir(parents=True, exist_ok=True)
    mib = lock.total_bytes / 2**20
    say(f"fetching {len(lock.jars)} Neo4j jars ({mib:.0f} MiB, once), checking every sha256")
    started = time.monotonic()
    staging = Path(tempfile.mkdtemp(prefix=".lib-", dir=home))
    try:
        pool = ThreadPoolExecutor(max_workers=_WORKERS)
        try:
            for _ in pool.map(lambda jar: download(jar, repository, staging), lock.jars):
                pass
        finally:
            # On the first failure, drop the queued downloads instead of finishing them.
            pool.shutdown(wait=True, cancel_futures=True)
        (home / STAMP_NAME).unlink(missing_ok=True)
        lib = home / "lib"
        if lib.exists():
            retired = home / f".lib-old-{secrets.token_hex(4)}"
            lib.rename(retired)
            shutil.rmtree(retired, ignore_errors=True)
        staging.rename(lib)
        (home / STAMP_NAME).write_text(lock.digest + "\n")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    say(f"fetched {len(lock.jars)} jars in {time.monotonic() - started:.0f}s")


def download(jar: Jar, repository: str, folder: Path) -> None:
    """One jar into ``folder``, its size and sha256 checked against ``jar`` (``LockMismatch``)."""
    url = jar.url(repository)
    if not url.startswith(("https://", "file://")):
        raise Unavailable(f"PALIMPSEST_MAVEN_REPOSITORY_URL must be an https:// URL, got {url!r}")
    last: Exception | None = None
    for attempt in range(_TRIES):
        digest = hashlib.sha256()
        size = 0
        try:
            with (
                urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response,  # noqa: S310 - scheme checked above
                (folder / jar.file_name).open("wb") as out,
            ):
                while block := response.read(1 << 16):
                    digest.update(block)
                    size += len(block)
                    out.write(block)
        except (urllib.error.URLError, OSError) as e:
            last = e
            if not transient(e, url):
                break
            time.sleep(0.5 * (attempt + 1))
            continue
        if size != jar.size or digest.hexdigest() != jar.sha256:
            raise LockMismatch(
                f"{jar.coordinates} from {url} does not match the lock (expected sha256 "
                f"{jar.sha256}, {jar.size} bytes; got {digest.hexdigest()}, {size} bytes); "
                "nothing was installed"
            )
        return
    raise Unavailable(f"could not download {jar.coordinates} from {url}: {last}")


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def make_lock(neo4j_version: str, browser_version: str, output: Path, say: Say) -> Lock:
    """Resolve ``pom.xml`` with Maven and write the lock: coordinates, size, sha256 per jar."""
    mvn = shutil.which("mvn")
    if mvn is None:
        raise Unavailable("`palimpsest neo4j lock` needs Maven (`mvn`); installing does not")
    pom = Path(str(files("palimpsest.local.neo4j").joinpath("pom.xml")))
    with tempfile.TemporaryDirectory(prefix="palimpsest-lock-") as tmp:
        listing = Path(tmp) / "dependencies.txt"
        subprocess.run(
            [
                mvn, "-B", "-q", "-f", str(pom), _MAVEN_LIST,
                f"-Dneo4j.version={neo4j_version}",
                f"-Dneo4j.browser.version={browser_version}",
                f"-DoutputFile={listing}",
                "-DoutputAbsoluteArtifactFilename=true",
                "-DincludeScope=runtime",
                "-DexcludeTypes=pom",
            ],
            check=True,
        )  # fmt: skip
        rows = _parse_listing(listing.read_text())
    rows.sort(key=lambda r: (r["group"], r["artifact"], r["classifier"]))
    head = {
        "neo4j_version": neo4j_version,
        "browser_version": browser_version,
        "generated_by": "palimpsest neo4j lock (Maven, from pom.xml beside this file)",
    }
    raw = _dump_lock(head, rows)
    lock = parse_lock(raw)  # the same checks installing applies
    output.write_bytes(raw)
    say(f"locked {len(lock.jars)} jars ({lock.total_bytes / 2**20:.0f} MiB) in {output}")
    return lock


def _dump_lock(head: dict[str, str], rows: list[dict[str, str | int]]) -> bytes:
    # One jar per line, so a refreshed lock reads as a plain diff.
    lines = [json.dumps(head)[:-1] + ', "jars": [']
    lines += [json.dumps(row) + ("," if i < len(rows) - 1 else "") for i, row in enumerate(rows)]
    lines.append("]}")
    return ("\n".join(lines) + "\n").encode()


def _parse_listing(text: str) -> list[dict[str, str | int]]:
    # Lines: "   group:artifact:jar[:classifier]:version:scope:/abs/path.jar -- module ..."
    rows: list[dict[str, str | int]] = []
    for line in text.splitlines():
        coords = line.strip().split(" -- ", 1)[0]
        parts = coords.split(":")
        if len(parts) not in (6, 7) or parts[2] != "jar":
            continue
        group, artifact = parts[0], parts[1]
        classifier = parts[3] if len(parts) == 7 else ""
        version, path = parts[-3], Path(parts[-1])
        rows.append(
            {
                "group": group,
                "artifact": artifact,
                "version": version,
                "classifier": classifier,
                "sha256": _sha256_file(path),
                "size": path.stat().st_size,
            }
        )
    if not rows:
        raise Unavailable("Maven listed no jars; see its output above")
    return rows
