"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.ranking.fulltext import *  # noqa: F403
