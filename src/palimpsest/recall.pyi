"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.ranking.fusion import *  # noqa: F403
