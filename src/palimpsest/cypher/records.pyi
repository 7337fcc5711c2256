"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.cypher.driver.records import *  # noqa: F403
