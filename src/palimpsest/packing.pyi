"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.ranking.packing import *  # noqa: F403
