"""``palimpsest export`` and ``palimpsest import``: a person's data to a file and back.

Operator tooling with the database credentials: the person is named on the command line
(``identity.console_operator`` acts as the tenant's operator), never through the API.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity.principal import console_operator
from palimpsest.identity.scopes import person_refs
from palimpsest.resolvers.portability import check_export, export_lines, import_file
from palimpsest.runtime import open_services


async def export_to_file(settings: Settings, tenant: str, user: str, out: Path) -> dict[str, Any]:
    refs = person_refs(console_operator(tenant), user)
    lines = 0
    size = 0
    async with open_services(settings) as svc:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            async for line in export_lines(svc, refs, datetime.now(UTC)):
                f.write(line + "\n")
                lines += 1
                size += len(line.encode()) + 1
    return {"tenant": tenant, "user": user, "out": str(out), "lines": lines, "bytes": size}


async def import_from_file(settings: Settings, file: Path) -> dict[str, Any]:
    def lines() -> Iterator[str]:
        with file.open(encoding="utf-8") as f:
            yield from f

    check_export(lines())  # a bad file is refused before anything is opened
    async with open_services(settings) as svc:
        done = await import_file(svc, lines)
    return {"tenant": done.tenant, "user": done.user, "records": done.counts}
