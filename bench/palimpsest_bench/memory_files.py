"""Memory as files (docs/reference/memory-files.md): the latency of each memory-tool command.

In process (the resolver every door calls, no HTTP), on the configured Neo4j with the
configured embedder: one user scope gets ``files`` files of a few lines under
``/memories/notes/``, then each command runs ``reps`` times (``view`` of a file, ``view`` of
the directory holding all of them, ``str_replace``, ``insert``, ``rename`` there and back,
``create`` + ``delete`` of a scratch file). JSON with p50/p95 per command; the person is
erased afterwards.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Any

from palimpsest.config import Settings
from palimpsest.identity import Principal, Scope
from palimpsest.identity.principal import console_operator
from palimpsest.resolvers.documents import memory_files as mf
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from palimpsest_bench.common import principal
from palimpsest_bench.versions import _pcts

TEXT = "# Note {i}\n\nThe user prefers tea in the afternoon.\nMeeting notes: item {i}.\n"


def run(
    settings: Settings, files: int = 50, reps: int = 30, say: Callable[[str], None] | None = None
) -> dict[str, Any]:
    return asyncio.run(_run(settings, files, reps, say or (lambda _: None)))


async def _run(
    settings: Settings, files: int, reps: int, say: Callable[[str], None]
) -> dict[str, Any]:
    tenant = f"bench-files-{uuid.uuid4().hex[:8]}"
    who = principal(tenant, "files")
    async with open_services(settings) as svc:
        try:
            return await _measure(svc, who, files, reps, say)
        finally:
            assert who.user_id is not None
            await erasure.erase_user(svc, console_operator(tenant), who.user_id)


async def _measure(
    svc: Services, who: Principal, files: int, reps: int, say: Callable[[str], None]
) -> dict[str, Any]:
    async def do(command: str, **args: Any) -> float:
        start = time.perf_counter()
        await mf.run(svc, who, Scope.USER, mf.MemoryCommand(command, **args))
        return time.perf_counter() - start

    say(f"writing {files} files")
    for i in range(files):
        await do("create", path=f"/memories/notes/n{i}.md", file_text=TEXT.format(i=i))
    target = "/memories/notes/n0.md"
    times: dict[str, list[float]] = {
        k: []
        for k in (
            "view_file",
            "view_directory",
            "str_replace",
            "insert",
            "rename",
            "create",
            "delete",
        )
    }
    for r in range(reps):
        times["view_file"].append(await do("view", path=target))
        times["view_directory"].append(await do("view", path="/memories"))
        times["str_replace"].append(
            await do("str_replace", path=target, old_str="item 0.", new_str=f"item 0 ({r}).")
        )
        times["str_replace"].append(
            await do("str_replace", path=target, old_str=f"item 0 ({r}).", new_str="item 0.")
        )
        times["insert"].append(await do("insert", path=target, insert_line=1, insert_text=f"r{r}"))
        moved = "/memories/moved.md"
        times["rename"].append(await do("rename", old_path=target, new_path=moved))
        times["rename"].append(await do("rename", old_path=moved, new_path=target))
        scratch = f"/memories/scratch-{r}.md"
        times["create"].append(await do("create", path=scratch, file_text="scratch\n"))
        times["delete"].append(await do("delete", path=scratch))
    return {
        "memory_files": {
            "files": files,
            "reps": reps,
            "embedder": svc.embedder.model_name,
            **{k: _pcts(v) for k, v in times.items()},
        }
    }
