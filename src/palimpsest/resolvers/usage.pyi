"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.resolvers.tenant.plane_usage import *  # noqa: F403
