"""A local file of spans the server has not taken yet, for runtimes that swallow a provider's
errors (Hermes logs them and goes on): what could not be banked is kept here and sent first
on the next call.

The spool is a JSON-lines file of spans with their compaction generation. ``keep`` appends and
flushes to disk before the adapter reports the failure; ``drain`` sends everything in it and
empties it only after every batch was accepted. A crash between the two sends the spans again,
which harvest counts as duplicates (each span keeps its ``sourceId``).
"""

from __future__ import annotations

import dataclasses
import json
import os
import threading
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from palimpsest.client import Client, SpanInput
from palimpsest.integrations.banking import Banked, bank


class Spool:
    def __init__(self, path: Path) -> None:
        self.path = path
        # Held across a drain, so a span kept meanwhile is not removed unsent.
        self.lock = threading.RLock()

    def keep(self, spans: Sequence[SpanInput], generation: int) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.lock, self.path.open("a", encoding="utf-8") as f:
            for span in spans:
                f.write(json.dumps({"generation": generation, "span": _plain(span)}) + "\n")
            f.flush()
            os.fsync(f.fileno())

    def pending(self) -> list[tuple[int, SpanInput]]:
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            return []
        rows = [json.loads(line) for line in lines if line.strip()]
        return [(int(r["generation"]), SpanInput(**r["span"])) for r in rows]

    def drain(self, client: Client) -> Banked:
        """Send what is kept, by generation, and empty the spool once all of it is banked."""
        with self.lock:
            kept = self.pending()
            total = Banked()
            for generation in sorted({g for g, _ in kept}):
                total += bank(client, [s for g, s in kept if g == generation], generation)
            if kept:
                self.path.unlink(missing_ok=True)
            return total


def _plain(span: SpanInput) -> dict[str, Any]:
    out = {}
    for f in dataclasses.fields(span):
        value = getattr(span, f.name)
        if value is None or f.name == "facts":
            continue
        out[f.name] = value.isoformat() if isinstance(value, datetime) else value
    return out
