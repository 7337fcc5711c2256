"""What the installers (Neo4j jars, GraphiQL tarballs) treat as worth another try."""

from __future__ import annotations

import urllib.error


def transient(error: Exception, url: str) -> bool:
    """A network hiccup or a 5xx may pass; a 4xx answer or a missing local file will not."""
    if url.startswith("file://"):
        return False
    if isinstance(error, urllib.error.HTTPError):
        return error.code >= 500
    return True
