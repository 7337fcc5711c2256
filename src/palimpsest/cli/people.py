"""Commands for people at a shell: ``ingest`` Markdown, quick ``memory`` looks, ``judge``.

They act as the run token in ``PALIMPSEST_RUN_TOKEN``. The quick looks ask the running API
through the typed client (``palimpsest.client``), so they start in a fraction of a second;
the reading ones' bodies are ``cli/looks.py``'s, which ``cli/shortcut.py`` also runs without
typer;
``ingest``, ``term-peaks`` and ``judge`` call the same resolvers as the API, in-process (so
``judge`` asks the model these settings name). Either way, scopes and grants are exactly
those of GraphQL and MCP.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import orjson
import typer

from palimpsest.cli import looks
from palimpsest.cli.apps import app, err, load_settings, print_json
from palimpsest.cli.looks import hits_table as hits_table
from palimpsest.cli.quick import ACT_AS_HINT
from palimpsest.cli.quick import client as _client
from palimpsest.errors import Unauthenticated
from palimpsest.identity import Scope

if TYPE_CHECKING:  # the quick looks never load the core, the driver or the settings' models
    from palimpsest.config import Settings
    from palimpsest.identity import Principal
    from palimpsest.resolvers.services import Services

memory_app = typer.Typer(no_args_is_help=True, help="Quick looks at key/value memory.")
app.add_typer(memory_app, name="memory")

T = TypeVar("T")
ScopeOpt = Annotated[Scope, typer.Option(help="Whose memory (the owner comes from the token).")]


@asynccontextmanager
async def _session(settings: Settings) -> AsyncIterator[tuple[Services, Principal]]:
    from palimpsest.identity.tokens import load_keys, verify
    from palimpsest.local import neo4j as neo4j_local
    from palimpsest.runtime import open_services

    if settings.run_token is None:
        raise Unauthenticated(ACT_AS_HINT)
    who = verify(load_keys(settings), settings.run_token.get_secret_value())
    managed = settings.neo4j.starts_local
    if managed and not neo4j_local.status(settings).running:
        neo4j_local.start(settings, say=err)
    async with open_services(settings) as services:
        yield services, who


def _run(work: Callable[[Services, Principal], Awaitable[T]]) -> T:
    import asyncio

    async def main() -> T:
        async with _session(load_settings()) as (services, who):
            return await work(services, who)

    return asyncio.run(main())


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Markdown files and folders (recursive).")],
    scope: ScopeOpt = Scope.USER,
    batch: Annotated[int, typer.Option(min=1, max=100, help="Documents per call.")] = 20,
) -> None:
    """Import Markdown into a scope; unchanged files are skipped, an interrupted run resumes."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from palimpsest.jobs.ingest import Manifest, find_sources
    from palimpsest.jobs.ingest import ingest as run_ingest

    sources = find_sources(paths)
    settings = load_settings()
    manifest = Manifest(settings.home / "ingest.db")
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[chunks]} chunks"),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, transient=False, console=_stderr_console()) as bar:
        task = bar.add_task("ingest", total=len(sources), chunks=0, rate="")

        def progress(done: int, chunks: int) -> None:
            elapsed = bar.tasks[task].elapsed or 0.0
            rate = f"{done / elapsed:.1f} files/s" if elapsed > 0 else ""
            bar.update(task, completed=done, chunks=chunks, rate=rate)

        try:
            report = _run(
                lambda svc, who: run_ingest(svc, who, scope, sources, manifest, batch, progress)
            )
        finally:
            manifest.close()
    for path, reason in report.failed:
        err(f"failed {path}: {reason}")
    err(
        f"{report.files} files: {report.imported} imported, {report.replaced} replaced, "
        f"{report.unchanged} unchanged, {len(report.failed)} failed; {report.chunks} chunks"
    )
    print_json(
        {
            "files": report.files,
            "imported": report.imported,
            "replaced": report.replaced,
            "unchanged": report.unchanged,
            "failed": [{"path": p, "reason": r} for p, r in report.failed],
            "chunks": report.chunks,
        }
    )
    if report.failed:
        raise typer.Exit(1)


@app.command("term-peaks")
def term_peaks(scope: ScopeOpt = Scope.USER) -> None:
    """Give a scope's full-text statistics written before term peaks were kept their peaks, so
    full-text recall reads fewer rows; safe while the server runs. Prints the terms bounded
    per kind as JSON ({} when there was nothing to do)."""
    from palimpsest.identity import resolve_scope
    from palimpsest.resolvers import term_index

    done = _run(
        lambda svc, who: term_index.backfill_peaks(svc.db.scoped(resolve_scope(who, scope)))
    )
    print_json(done)


@app.command("judge")
def judge(
    scope: Annotated[
        Scope,
        typer.Option(case_sensitive=False, help="Whose pairs (the owner comes from the token)."),
    ] = Scope.USER,
    limit: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=200,
            help="Pairs to ask about (default PALIMPSEST_JUDGE_PAIRS_PER_CALL: one call).",
        ),
    ] = None,
) -> None:
    """Ask the configured model now about a scope's oldest pairs of close facts without a
    verdict (report-only; docs/extraction.md), as `judgeConflicts` does: the TENANT scope's,
    or a user's whose pairs no consolidator visit reaches. Prints the counts as JSON."""
    from palimpsest.resolvers import cycle

    run = _run(lambda svc, who: cycle.judge_now(svc, who, scope, limit))
    print_json(
        {
            "asked": run.asked,
            "judged": run.judged,
            "dropped": run.dropped,
            "failed": run.failed,
            "refused": run.refused,
            "pending": run.pending,
        }
    )


@app.command("usage")
def usage(scope: ScopeOpt = Scope.USER) -> None:
    """Print what a scope stores on every plane, beside each limit, as JSON (asks the running
    API as the run token's caller)."""
    _exit(looks.usage(scope.value))


TimeOpt = Annotated[str | None, typer.Option(help="A date: YYYY, YYYY-MM, YYYY-MM-DD or RFC 3339.")]


@memory_app.command("get")
def memory_get(
    key: str, scope: ScopeOpt = Scope.USER, as_of: TimeOpt = None, known_at: TimeOpt = None
) -> None:
    """Print one entry's value as JSON (with --known-at: the value the key held then); exit 1
    when the key is missing or expired."""
    _exit(looks.memory_get(key, scope.value, as_of, known_at))


@memory_app.command("set")
def memory_set(
    key: str,
    value: Annotated[str, typer.Argument(help="JSON; anything that is not JSON is a string.")],
    scope: ScopeOpt = Scope.USER,
    ttl: Annotated[int | None, typer.Option(min=0, help="Expire after N seconds.")] = None,
    embed: Annotated[bool, typer.Option(help="Embed it so search finds it by meaning.")] = True,
    pinned: Annotated[
        bool | None,
        typer.Option(
            "--pinned/--unpinned", help="Pin it (`context` packs it first); default: keep."
        ),
    ] = None,
) -> None:
    """Store a value under a key (replacing what was there)."""
    with _client() as client:
        entry = client.memory_set(
            scope, key, _json_or_text(value), ttl_seconds=ttl, embed=embed, pinned=pinned
        )
    err(f"set {entry.key} in {entry.scope.value} at {entry.updated_at.isoformat()}")


@memory_app.command("history")
def memory_history(
    key: str,
    scope: ScopeOpt = Scope.USER,
    limit: Annotated[int, typer.Option(min=1)] = 100,
    after: Annotated[str | None, typer.Option(help="The cursor a page printed.")] = None,
) -> None:
    """Print a key's versions as JSON, newest first (tombstones: deleted, no value), and the
    cursor of the next page on stderr when there is one."""
    _exit(looks.memory_history(key, scope.value, limit, after))


@memory_app.command("search")
def memory_search(
    query: str,
    scope: ScopeOpt = Scope.USER,
    top_k: Annotated[int, typer.Option(min=1)] = 10,
) -> None:
    """Search notes, facts and documents of a scope; a table on stderr, JSON hits on stdout."""
    _exit(looks.memory_search(query, scope.value, top_k))


def _exit(code: int) -> None:
    if code:
        raise typer.Exit(code)


def _json_or_text(value: str) -> Any:
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value


def _stderr_console() -> Any:
    from rich.console import Console

    return Console(file=sys.stderr)
