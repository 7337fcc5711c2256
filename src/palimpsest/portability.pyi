"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.jobs.portability import *  # noqa: F403
