"""The typed client a quick look (``memory get``, ``context``, ...) makes, without what a
single blocking request to a plain ``http://`` server never uses (docs/notes/distributions.md).

Two costs of a default ``httpx.Client`` are skipped:

- ``httpx`` imports its own command line (``httpx._main``: click, rich and pygments) whenever
  they are installed, as they are beside the server; the quick looks never run it.
- The default TLS context reads the whole CA bundle when the client is made. For an
  ``http://`` address with no proxy configured, no TLS is ever spoken (the client follows no
  redirects), so the context given trusts no authority and loads nothing: were TLS used after
  all, it would fail closed, never unverified.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from palimpsest.client import Client

TIMEOUT = 30.0  # seconds, as the client's own default
ACT_AS_HINT = (
    "set PALIMPSEST_RUN_TOKEN to the run token to act as, e.g. "
    "export PALIMPSEST_RUN_TOKEN=$(palimpsest token mint --tenant acme --user alice)"
)


def client() -> Client:
    """The typed client on the running API (``PALIMPSEST_SERVER_URL``), as the run token."""
    # Both named in the environment (how agents and scripts run the quick looks): nothing else
    # of the settings is read, so their models (slow to import) are not loaded.
    url, token = os.environ.get("PALIMPSEST_SERVER_URL"), os.environ.get("PALIMPSEST_RUN_TOKEN")
    if url and token:
        return light_client(url, token)
    from palimpsest.config import Settings
    from palimpsest.errors import Unauthenticated

    settings = Settings()
    if settings.run_token is None:
        raise Unauthenticated(ACT_AS_HINT)
    return light_client(settings.api_url, settings.run_token.get_secret_value())


def light_client(url: str, token: str) -> Client:
    """``Client(url=url, token=token)``, made as cheaply as the address allows."""
    if "httpx" not in sys.modules:
        # Its fallback ``main`` is what httpx defines when its command line is not installed.
        sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]
    import httpx

    from palimpsest.client import Client

    if not plain_http(url):
        return Client(url=url, token=token, timeout=TIMEOUT)
    import ssl

    untrusting = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # verifies, and trusts no one
    return Client(url=url, token=token, http=httpx.Client(timeout=TIMEOUT, verify=untrusting))


def plain_http(url: str, environ: os._Environ[str] | dict[str, str] = os.environ) -> bool:
    """An ``http://`` address and no proxy setting: a request that cannot involve TLS."""
    proxied = any(k.lower() in ("http_proxy", "https_proxy", "all_proxy") for k in environ)
    return url.lower().startswith("http://") and not proxied
