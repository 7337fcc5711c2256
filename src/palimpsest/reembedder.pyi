"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.jobs.reembedder import *  # noqa: F403
