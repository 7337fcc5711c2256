"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.resolvers.recall.text import *  # noqa: F403
