"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.domain.time.timerefs import *  # noqa: F403
