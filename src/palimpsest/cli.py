"""The ``palimpsest`` command: serve, neo4j, token (and, later, eval and bench)."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from palimpsest.config import Settings
from palimpsest.identity import Role, Scope
from palimpsest.identity.tokens import load_keys, mint

app = typer.Typer(no_args_is_help=True, add_completion=False, help=__doc__)
neo4j_app = typer.Typer(no_args_is_help=True, help="The managed local Neo4j server.")
token_app = typer.Typer(no_args_is_help=True, help="Run tokens for development.")
bench_app = typer.Typer(
    no_args_is_help=True, help="Benchmarks: one JSON object on stdout, progress on stderr."
)
graphiql_app = typer.Typer(no_args_is_help=True, help="The offline GraphiQL page's assets.")
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(graphiql_app, name="graphiql")
app.add_typer(token_app, name="token")
app.add_typer(bench_app, name="bench")
eval_app = typer.Typer(
    no_args_is_help=True,
    help="Evaluations on a data folder: one JSON object on stdout, progress on stderr.",
)
app.add_typer(eval_app, name="eval")


def _err(message: str) -> None:
    typer.echo(message, err=True)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address.")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port.")] = None,
) -> None:
    """Start the API (and the managed Neo4j when it is the configured default)."""
    import uvicorn

    from palimpsest import neo4j_local
    from palimpsest.app import create_app
    from palimpsest.graphql.ide import install_assets

    settings = Settings()
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    settings = settings.model_copy(update=overrides)
    if settings.neo4j_managed and settings.neo4j_uri is None:
        neo4j_local.start(settings, say=_err)
    install_assets(settings.graphiql_dir, settings.npm_registry_url)
    if settings.token_secret is None and settings.token_public_key_file is None:
        token = mint(load_keys(settings), tenant="dev", user="dev-user", agent="dev-agent")
        _err(f"development token (tenant dev, user dev-user, agent dev-agent):\n{token}")
    _err(f"GraphiQL: http://{settings.host}:{settings.port}/graphql")
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="warning")


@neo4j_app.command("install")
def neo4j_install() -> None:
    """Fetch the locked Neo4j jars (sha256-checked), write the configuration, set a password."""
    from palimpsest import neo4j_local

    neo4j_local.install(Settings(), say=_err)


@graphiql_app.command("install")
def graphiql_install() -> None:
    """Fetch GraphiQL's pinned npm tarballs (integrity-checked) into PALIMPSEST_HOME."""
    from palimpsest.graphql.ide import install_assets

    settings = Settings()
    install_assets(settings.graphiql_dir, settings.npm_registry_url)
    _err(f"GraphiQL assets in {settings.graphiql_dir}")


@neo4j_app.command("lock")
def neo4j_lock(
    output: Annotated[
        Path | None, typer.Option(help="Where to write the lock (default: the packaged one).")
    ] = None,
) -> None:
    """Maintainers: resolve pom.xml with Maven and rewrite the jar lock (coordinates, sha256)."""
    from palimpsest.neo4j_local import jars

    settings = Settings()
    jars.make_lock(
        settings.neo4j_version,
        settings.neo4j_browser_version,
        output or jars.lock_path(),
        say=_err,
    )


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Start the managed Neo4j in the background and wait until Bolt answers."""
    from palimpsest import neo4j_local

    s = neo4j_local.start(Settings(), say=_err)
    _err(f"bolt {s.bolt_uri}   browser {s.browser_url}")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the managed Neo4j cleanly."""
    from palimpsest import neo4j_local

    neo4j_local.stop(Settings(), say=_err)


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Say whether the managed Neo4j is installed and running; exit 1 when it is not running."""
    from palimpsest import neo4j_local

    s = neo4j_local.status(Settings())
    typer.echo(
        f"installed={s.installed} running={s.running} pid={s.pid} "
        f"bolt={s.bolt_uri} browser={s.browser_url} home={s.home}"
    )
    if not s.running:
        raise typer.Exit(1)


@token_app.command("mint")
def token_mint(
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    user: Annotated[str | None, typer.Option(help="User id.")] = None,
    agent: Annotated[str | None, typer.Option(help="Agent name.")] = None,
    admin: Annotated[bool, typer.Option(help="Grant the admin role.")] = False,
    consolidator: Annotated[bool, typer.Option(help="Grant the consolidator role.")] = False,
    isolated: Annotated[bool, typer.Option(help="Mark the member isolated.")] = False,
    memory_scope: Annotated[
        list[Scope] | None, typer.Option(help="Memory grant (repeat); unset means defaults.")
    ] = None,
    sql_scope: Annotated[
        list[Scope] | None, typer.Option(help="SQL grant (repeat); unset means defaults.")
    ] = None,
    ttl: Annotated[int, typer.Option(min=1, help="Lifetime in seconds.")] = 3600,
) -> None:
    """Print a signed run token (only the token) on stdout."""
    roles = {r for r, on in ((Role.ADMIN, admin), (Role.CONSOLIDATOR, consolidator)) if on}
    token = mint(
        load_keys(Settings()),
        tenant=tenant,
        user=user,
        agent=agent,
        roles=roles,
        memory_scopes=memory_scope,
        sql_scopes=sql_scope,
        isolated=isolated,
        ttl_seconds=ttl,
    )
    sys.stdout.write(token + "\n")


def _print_json(result: object) -> None:
    import orjson

    sys.stdout.write(orjson.dumps(result).decode() + "\n")


@bench_app.command("sql")
def bench_sql(
    n: Annotated[int, typer.Option(min=1, help="Statements per kind (insert, select).")] = 2000,
) -> None:
    """SQL Memory: inserts and point selects per second, GraphQL against bare sqlite3."""
    from palimpsest_bench import sql

    _print_json(sql.run(Settings(), n=n, say=_err))


BenchChunks = Annotated[int, typer.Option("--chunks", min=1, help="Chunks in the dataset.")]
BenchQueries = Annotated[int, typer.Option(min=1, help="Measured queries.")]


@bench_app.command("recall-latency")
def bench_recall_latency(chunks: BenchChunks = 10_000, queries: BenchQueries = 300) -> None:
    """Scoped `search` latency through GraphQL over HTTP against the same raw work (ms)."""
    import asyncio

    from palimpsest_bench import recall_bench

    _print_json(asyncio.run(recall_bench.run_latency(Settings(), chunks, queries, say=_err)))


@bench_app.command("filtered-recall")
def bench_filtered_recall(chunks: BenchChunks = 10_000, queries: BenchQueries = 50) -> None:
    """Top-10 overlap with an exact in-scope search at 0.01-100 % scope shares."""
    import asyncio

    from palimpsest_bench import recall_bench

    _print_json(asyncio.run(recall_bench.run_filtered(Settings(), chunks, queries, say=_err)))


@bench_app.command("ingest")
def bench_ingest(chunks: BenchChunks = 2000) -> None:
    """Chunks per second through import_document against embedding-only throughput."""
    import asyncio

    from palimpsest_bench import recall_bench

    _print_json(asyncio.run(recall_bench.run_ingest(Settings(), chunks, say=_err)))


DataDir = Annotated[
    Path,
    typer.Option(
        "--data",
        exists=True,
        file_okay=False,
        help="The dataset's own folder (e.g. ../shared/eval/dev/situatedqa).",
    ),
]
KeepData = Annotated[bool, typer.Option(help="Keep the eval tenant's facts afterwards.")]


@eval_app.command("situatedqa")
def eval_situatedqa(data: DataDir, keep: KeepData = False) -> None:
    """SituatedQA: load timelines as facts, answer as-of queries, exact match by date type."""
    import asyncio

    from palimpsest_bench import temporal

    _print_json(asyncio.run(temporal.run_situatedqa(Settings(), data, _err, keep=keep)))


@eval_app.command("yago11k")
def eval_yago11k(data: DataDir, keep: KeepData = False) -> None:
    """YAGO11k: load temporal KG facts, answer point-in-time probes, exact set match."""
    import asyncio

    from palimpsest_bench import temporal

    _print_json(asyncio.run(temporal.run_yago11k(Settings(), data, _err, keep=keep)))


class RecallMode(StrEnum):
    VECTOR = "vector"
    FULLTEXT = "fulltext"
    HYBRID = "hybrid"


RecallModeOpt = Annotated[RecallMode, typer.Option("--mode", help="Which legs of recall to run.")]
TopK = Annotated[
    int | None,
    typer.Option("--top-k", min=1, help="topK per query (default 10; SciFact 50, the cap)."),
]
Pool = Annotated[
    int | None, typer.Option(min=1, help="Candidates per leg (default: the resolver's).")
]
KeepDocs = Annotated[bool, typer.Option(help="Keep the eval tenant's documents afterwards.")]
EmbedCache = Annotated[
    Path | None,
    typer.Option(help="Opt-in SQLite cache of chunk embeddings for repeated runs."),
]
Limit = Annotated[int | None, typer.Option(min=1, help="Only the first N queries.")]


def _recall_eval(
    dataset: str,
    data: Path,
    mode: RecallMode,
    top_k: int | None,
    pool: int | None,
    keep: bool,
    embed_cache: Path | None,
    limit: int | None,
) -> None:
    import asyncio

    from palimpsest.resolvers.recall import Mode
    from palimpsest_bench import recall_eval

    result = recall_eval.run(
        Settings(),
        dataset,
        data,
        Mode(mode.value),
        _err,
        top_k=top_k,
        pool=pool,
        keep=keep,
        embed_cache=embed_cache,
        limit=limit,
    )
    _print_json(asyncio.run(result))


def _recall_command(dataset: str, summary: str) -> None:
    def command(
        data: DataDir,
        mode: RecallModeOpt = RecallMode.HYBRID,
        top_k: TopK = None,
        pool: Pool = None,
        keep: KeepDocs = False,
        embed_cache: EmbedCache = None,
        limit: Limit = None,
    ) -> None:
        _recall_eval(dataset, data, mode, top_k, pool, keep, embed_cache, limit)

    command.__doc__ = summary
    eval_app.command(dataset)(command)


_recall_command(
    "locomo", "LoCoMo: sessions as documents, turns as chunks; recall@5/10, nDCG@10, MRR@10."
)
_recall_command("scifact", "SciFact: one document per abstract; nDCG@10 and recall@100.")
_recall_command("timeqa", "TimeQA: pages as documents, paragraphs as chunks; nDCG@10 and MRR@10.")


def main() -> None:
    app()
