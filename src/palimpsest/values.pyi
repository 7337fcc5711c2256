"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.notes.values import *  # noqa: F403
