"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.ontology.placement import *  # noqa: F403
