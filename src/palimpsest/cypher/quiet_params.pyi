"""Deprecated alias, for one release: the module moved (palimpsest.MOVED)."""

from palimpsest.cypher.driver.quiet_params import *  # noqa: F403
