"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.documents.revisions import *  # noqa: F403
