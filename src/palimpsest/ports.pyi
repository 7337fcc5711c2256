"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.local.ports import *  # noqa: F403
