"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.ranking.cues import *  # noqa: F403
