"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.notes.namespaces import *  # noqa: F403
