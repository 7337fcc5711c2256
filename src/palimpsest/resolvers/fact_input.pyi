"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.resolvers.facts.inputs import *  # noqa: F403
