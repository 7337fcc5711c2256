"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.resolvers.recall.fusion import *  # noqa: F403
