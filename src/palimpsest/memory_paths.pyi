"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.notes.memory_paths import *  # noqa: F403
