"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.resolvers.cycle.turn_rows import *  # noqa: F403
