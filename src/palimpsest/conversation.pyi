"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.documents.conversation import *  # noqa: F403
