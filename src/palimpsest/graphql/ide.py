"""The offline GraphiQL page: the pinned files ``local/graphiql.py`` installs, served from
this server only."""

from __future__ import annotations

import functools
import html
from pathlib import Path

from palimpsest.local.graphiql import ASSETS

_TEMPLATE = Path(__file__).parent / "static" / "graphiql.html"
_ASSETS_MARKER = "<!-- palimpsest:assets -->"


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
