"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.jobs.consolidator import *  # noqa: F403
