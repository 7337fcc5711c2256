"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.cypher.driver.errors import *  # noqa: F403
