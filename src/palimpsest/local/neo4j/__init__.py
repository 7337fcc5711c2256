"""The managed local Neo4j server (Maven Central jars, no Docker)."""

from palimpsest.local.neo4j.manager import Status, credentials, install, start, status, stop

__all__ = ["Status", "credentials", "install", "start", "status", "stop"]
