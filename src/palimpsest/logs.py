"""One-line JSON logs. Callers log names, codes and counts, never contents or tokens."""

from __future__ import annotations

import logging
import sys
from datetime import UTC, datetime

import orjson


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        return orjson.dumps(entry).decode()


def configure(level: str) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    # The driver logs query text at DEBUG; keep it out whatever the app level is.
    logging.getLogger("neo4j").setLevel(logging.WARNING)
    # Strawberry's own error logger prints messages that may quote arguments; ours replaces it.
    logging.getLogger("strawberry.execution").setLevel(logging.CRITICAL)
