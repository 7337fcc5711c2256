"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.documents.markdown import *  # noqa: F403
