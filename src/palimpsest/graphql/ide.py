"""GraphiQL that works offline.

Strawberry's stock IDE page pulls React and GraphiQL from a CDN, so without network it sits
on "Loading..." forever. Here the same pinned files are fetched once with ``npm pack`` into a
folder outside the git tree (under ``~/.palimpsest``), served by Starlette's ``StaticFiles``,
and the page references only that local URL.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import html
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path
from typing import NamedTuple

__all__ = [
    "ASSETS",
    "ASSET_PACKAGES",
    "Asset",
    "assets_missing",
    "ide_html",
    "install_assets",
]

# The versions strawberry 0.341.2's graphiql.html pins, so the page behaves like upstream.
ASSET_PACKAGES: dict[str, str] = {
    "react": "18.2.0",
    "react-dom": "18.2.0",
    "js-cookie": "3.0.5",
    "graphiql": "3.8.3",
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

_TEMPLATE = Path(__file__).parent / "static" / "graphiql.html"
_ASSETS_MARKER = "<!-- palimpsest:assets -->"
_NPM_TIMEOUT_S = 300


def assets_missing(target: Path) -> list[str]:
    """Names of the asset files not yet present in ``target``, in load order."""
    return [name for name in ASSETS if not (target / name).is_file()]


def install_assets(target: Path) -> None:
    """Fetch the pinned packages with ``npm pack`` and copy the browser files into ``target``.

    A no-op when every file is already there, so it is cheap to call at every start. Each file
    is checked against its SRI hash and written atomically, so a crash or a concurrent install
    never leaves a truncated file that the existence check would then accept.
    """
    missing = assets_missing(target)
    if not missing:
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError(
            "npm is not on PATH; it is needed once to fetch the GraphiQL assets "
            f"({', '.join(missing)}) into {target}. Install Node.js/npm and retry."
        )
    packages = [pkg for pkg in ASSET_PACKAGES if any(ASSETS[n].package == pkg for n in missing)]
    specs = [f"{pkg}@{ASSET_PACKAGES[pkg]}" for pkg in packages]
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="palimpsest-npm-") as tmp:
        _npm_pack(npm, specs, Path(tmp))
        for name in missing:
            asset = ASSETS[name]
            tarball = Path(tmp) / f"{asset.package}-{ASSET_PACKAGES[asset.package]}.tgz"
            data = _read_member(tarball, asset.member)
            if _sri_sha384(data) != asset.integrity:
                raise RuntimeError(
                    f"{asset.member} from {tarball.name} does not match the pinned hash "
                    f"{asset.integrity}; refusing to serve it."
                )
            _write_atomic(target / name, data)


@functools.cache
def ide_html(assets_url: str) -> str:
    """The GraphiQL page, loading its scripts and CSS only from ``assets_url``.

    ``assets_url`` is the absolute path where ``install_assets``' target is mounted, e.g.
    ``"/graphql/assets"``. Anything with a scheme or host is refused: the whole point is that
    the page never leaves the server it came from.
    """
    if not assets_url.startswith("/") or assets_url.startswith("//"):
        raise ValueError(f"assets_url must be a local absolute path, got {assets_url!r}")
    base = assets_url.rstrip("/")
    tags: list[str] = []
    for name, asset in ASSETS.items():
        url = html.escape(f"{base}/{name}")
        sri = html.escape(asset.integrity)
        if name.endswith(".css"):
            tags.append(f'<link rel="stylesheet" href="{url}" integrity="{sri}" />')
        else:
            tags.append(f'<script src="{url}" integrity="{sri}"></script>')
    template = _TEMPLATE.read_text(encoding="utf-8")
    return template.replace(_ASSETS_MARKER, "\n    ".join(tags), 1)


def _npm_pack(npm: str, specs: list[str], dest: Path) -> None:
    # Quiet npm's extras; --ignore-scripts because nothing here needs to run package code.
    env = {
        **os.environ,
        "npm_config_update_notifier": "false",
        "npm_config_fund": "false",
        "npm_config_audit": "false",
    }
    argv = [npm, "pack", "--ignore-scripts", *specs]
    try:
        proc = subprocess.run(
            argv,
            cwd=dest,
            env=env,
            capture_output=True,
            text=True,
            timeout=_NPM_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeError(f"`npm pack {' '.join(specs)}` could not run: {exc}") from exc
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip()[-2000:]
        raise RuntimeError(
            f"`npm pack {' '.join(specs)}` failed with exit code {proc.returncode} "
            f"(is the npm registry reachable?):\n{detail}"
        )


def _read_member(tarball: Path, member: str) -> bytes:
    # Read one member into memory: nothing from the tarball is ever extracted by path.
    try:
        with tarfile.open(tarball, "r:gz") as tar:
            fileobj = tar.extractfile(member)
            if fileobj is None:
                raise RuntimeError(f"{member} in {tarball.name} is not a regular file")
            return fileobj.read()
    except (OSError, KeyError, tarfile.TarError) as exc:
        raise RuntimeError(f"cannot read {member} from {tarball.name}: {exc}") from exc


def _sri_sha384(data: bytes) -> str:
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode("ascii")


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
