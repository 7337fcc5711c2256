"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.jobs.sweeper import *  # noqa: F403
