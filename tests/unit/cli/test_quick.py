"""The quick looks' client (``cli.quick``): a plain ``http://`` address without a proxy skips
the CA bundle, and any TLS it might meet would fail closed, never unverified."""

from __future__ import annotations

import ssl

import httpx
import pytest

from palimpsest.cli.quick import light_client, plain_http


def test_only_a_plain_http_address_without_a_proxy_is_plain() -> None:
    assert plain_http("http://127.0.0.1:8080", {})
    assert plain_http("HTTP://api.internal", {"PATH": "/bin"})
    assert not plain_http("https://memory.example", {})
    assert not plain_http("http://127.0.0.1:8080", {"HTTPS_PROXY": "https://proxy:3128"})
    assert not plain_http("http://127.0.0.1:8080", {"http_proxy": "http://proxy:3128"})
    assert not plain_http("http://127.0.0.1:8080", {"ALL_PROXY": "socks5://proxy"})


def _context(client: httpx.Client) -> ssl.SSLContext:
    pool = client._transport._pool  # type: ignore[attr-defined]
    context: ssl.SSLContext = pool._ssl_context
    return context


def test_a_plain_address_gets_a_context_that_verifies_and_trusts_no_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    with light_client("http://127.0.0.1:9", "t") as client:
        context = _context(client.transport.http)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0


def test_a_tls_address_keeps_the_default_verification() -> None:
    with light_client("https://memory.example", "t") as client:
        context = _context(client.transport.http)
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.cert_store_stats()["x509_ca"] > 0
