"""The managed local PostgreSQL for SQL Memory (Debian's package, no Docker)."""

from palimpsest.local.postgres.manager import (
    Status,
    conninfo,
    credentials,
    start,
    status,
    stop,
)

__all__ = ["Status", "conninfo", "credentials", "start", "status", "stop"]
