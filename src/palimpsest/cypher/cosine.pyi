"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.cypher.driver.cosine import *  # noqa: F403
