"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.ranking.dedup import *  # noqa: F403
