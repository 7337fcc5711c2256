"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.names import *  # noqa: F403
