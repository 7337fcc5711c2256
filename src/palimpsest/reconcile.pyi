"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.ontology.reconcile import *  # noqa: F403
