"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.time.timeparse import *  # noqa: F403
