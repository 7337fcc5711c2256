"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.resolvers.notes.namespaced import *  # noqa: F403
