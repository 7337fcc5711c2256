"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.resolvers.documents.importing import *  # noqa: F403
