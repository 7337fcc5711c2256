"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.embedding.models import *  # noqa: F403
