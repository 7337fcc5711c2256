"""GraphiQL that works offline.

Strawberry's stock IDE page pulls React and GraphiQL from a CDN, so without network it sits
on "Loading..." forever. Here the same pinned files are fetched once from the npm registry's
tarballs (in Python, no npm client; each tarball checked against its pinned sha512 integrity,
each file against strawberry's sha384) into a folder outside the git tree (under
``~/.palimpsest``), served by Starlette's ``StaticFiles``; the page references only that URL.
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import NamedTuple

from palimpsest.local.fetching import transient

__all__ = [
    "ASSETS",
    "ASSET_PACKAGES",
    "Asset",
    "Package",
    "assets_missing",
    "install_assets",
]


class Package(NamedTuple):
    version: str
    integrity: str  # the registry's sha512 SRI of the whole tarball


# The versions strawberry 0.341.2's graphiql.html pins, so the page behaves like upstream.
ASSET_PACKAGES: dict[str, Package] = {
    "react": Package(
        "18.2.0",
        "sha512-/3IjMdb2L9QbBdWiW5e3P2/npwMBaU9mHCSCUzNln0ZCYbcfTsGbTJrU/kGemdH2IWmB2ioZ+zkxtmq6g09fGQ==",
    ),
    "react-dom": Package(
        "18.2.0",
        "sha512-6IMTriUmvsjHUjNtEDudZfuDQUoWXVxKHhlEGSk81n4YFS+r/Kl99wXiwlVXtPBtJenozv2P+hxDsw9eA7Xo6g==",
    ),
    "js-cookie": Package(
        "3.0.5",
        "sha512-cEiJEAEoIbWfCZYKWhVwFuvPX1gETRYPw6LlaTKoxD3s2AkXzkCjnp6h0V77ozyqj0jakteJ4YqDJT830+lVGw==",
    ),
    "graphiql": Package(
        "3.8.3",
        "sha512-cuPDYtXVKV86Pu5PHBX642Odi/uVEE2y1Jxq5rGO/Qy1G2lRp7ZZ7a/T30RzxhuLSWo9zUbzq0P3U49//H0Ugw==",
    ),
}


class Asset(NamedTuple):
    """One file served to the browser, and where it comes from."""

    package: str
    member: str  # path inside the npm tarball
    integrity: str  # SRI hash; equals strawberry's pin for the CDN copy, so both are checked


# Insertion order is load order: GraphiQL's UMD bundle needs the React globals first.
ASSETS: dict[str, Asset] = {
    "react.production.min.js": Asset(
        "react",
        "package/umd/react.production.min.js",
        "sha384-tMH8h3BGESGckSAVGZ82T9n90ztNXxvdwvdM6UoR56cYcf+0iGXBliJ29D+wZ/x8",
    ),
    "react-dom.production.min.js": Asset(
        "react-dom",
        "package/umd/react-dom.production.min.js",
        "sha384-bm7MnzvK++ykSwVJ2tynSE5TRdN+xL418osEVF2DE/L/gfWHj91J2Sphe582B1Bh",
    ),
    "js.cookie.min.js": Asset(
        "js-cookie",
        "package/dist/js.cookie.min.js",
        "sha384-/vxhYfM1LENRhdpZ8dwEsQn/X4VhpbEZSiU4m/FwR+PVpzar4fkEOw8FP9Y+OfQN",
    ),
    "graphiql.min.css": Asset(
        "graphiql",
        "package/graphiql.min.css",
        "sha384-Mq3vbRBY71jfjQAt/DcjxUIYY33ksal4cgdRt9U/hNPvHBCaT2JfJ/PTRiPKf0aM",
    ),
    "graphiql.min.js": Asset(
        "graphiql",
        "package/graphiql.min.js",
        "sha384-HbRVEFG0JGJZeAHCJ9Xm2+tpknBQ7QZmNlO/DgZtkZ0aJSypT96YYGRNod99l9Ie",
    ),
}

_TIMEOUT_S = 60
_TRIES = 3


def assets_missing(target: Path) -> list[str]:
    """Names of the asset files not yet present in ``target``, in load order."""
    return [name for name in ASSETS if not (target / name).is_file()]


def install_assets(target: Path, registry: str) -> None:
    """Fetch the pinned tarballs from the npm registry at ``registry`` and copy the browser
    files into ``target``.

    A no-op when every file is already there, so it is cheap to call at every start. Each
    tarball is checked against its sha512 integrity and each file against its sha384, and files
    are written atomically, so a failure never leaves a file that the existence check would
    then accept.
    """
    missing = assets_missing(target)
    if not missing:
        return
    needed = [pkg for pkg in ASSET_PACKAGES if any(ASSETS[n].package == pkg for n in missing)]
    tarballs = {pkg: _fetch_tarball(registry, pkg) for pkg in needed}
    files = {}
    for name in missing:
        asset = ASSETS[name]
        data = _read_member(tarballs[asset.package], asset.package, asset.member)
        if _sri("sha384", data) != asset.integrity:
            raise RuntimeError(
                f"{asset.member} of {asset.package} does not match the pinned hash "
                f"{asset.integrity}; refusing to serve it."
            )
        files[name] = data
    target.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        _write_atomic(target / name, data)


def _fetch_tarball(registry: str, package: str) -> bytes:
    pinned = ASSET_PACKAGES[package]
    url = f"{registry.rstrip('/')}/{package}/-/{package}-{pinned.version}.tgz"
    if not url.startswith(("https://", "file://")):
        raise RuntimeError(f"PALIMPSEST_NPM_REGISTRY_URL must be an https:// URL, got {url!r}")
    last: Exception | None = None
    data = b""
    for attempt in range(_TRIES):
        try:
            with urllib.request.urlopen(url, timeout=_TIMEOUT_S) as response:  # noqa: S310 - scheme checked above
                data = response.read()
            last = None
            break
        except (urllib.error.URLError, OSError) as e:
            last = e
            if not transient(e, url):
                break
            time.sleep(0.5 * (attempt + 1))
    if last is not None:
        raise RuntimeError(
            f"could not fetch {package}@{pinned.version} from {url} (is the npm registry "
            f"reachable? set PALIMPSEST_NPM_REGISTRY_URL for a mirror): {last}"
        )
    if _sri("sha512", data) != pinned.integrity:
        raise RuntimeError(
            f"{package}@{pinned.version} from {url} does not match its pinned integrity "
            f"{pinned.integrity}; refusing to use it."
        )
    return data


def _read_member(tarball: bytes, package: str, member: str) -> bytes:
    # Read one member into memory: nothing from the tarball is ever extracted by path.
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as tar:
            fileobj = tar.extractfile(member)
            if fileobj is None:
                raise RuntimeError(f"{member} in {package}'s tarball is not a regular file")
            return fileobj.read()
    except (OSError, KeyError, tarfile.TarError) as exc:
        raise RuntimeError(f"cannot read {member} from {package}'s tarball: {exc}") from exc


def _sri(algorithm: str, data: bytes) -> str:
    digest = hashlib.new(algorithm, data).digest()
    return f"{algorithm}-" + base64.b64encode(digest).decode("ascii")


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, path)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
