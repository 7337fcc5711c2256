"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.cypher.driver.executor import *  # noqa: F403
