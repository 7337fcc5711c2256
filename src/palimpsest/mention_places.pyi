"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.documents.mention_places import *  # noqa: F403
