"""Backup and restore of the managed deployment: the Neo4j dump, SQL Memory, a manifest."""

from palimpsest.local.backup.restore import restore
from palimpsest.local.backup.take import backup

__all__ = ["backup", "restore"]
