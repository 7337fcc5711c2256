"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.time.dateranges import *  # noqa: F403
