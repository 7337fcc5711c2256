"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.ontology.predicates import *  # noqa: F403
