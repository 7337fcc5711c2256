"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.ontology.extractors import *  # noqa: F403
