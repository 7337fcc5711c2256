"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.jobs.ingest import *  # noqa: F403
