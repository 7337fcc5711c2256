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
postgres_app = typer.Typer(
    no_args_is_help=True, help="The managed local PostgreSQL (for PALIMPSEST_SQL_BACKEND=postgres)."
)
token_app = typer.Typer(no_args_is_help=True, help="Run tokens for development.")
bench_app = typer.Typer(
    no_args_is_help=True, help="Benchmarks: one JSON object on stdout, progress on stderr."
)
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(postgres_app, name="postgres")
app.add_typer(token_app, name="token")
app.add_typer(bench_app, name="bench")
eval_app = typer.Typer(
    no_args_is_help=True,
    help="Evaluations on a data folder: one JSON object on stdout, progress on stderr.",
)
app.add_typer(eval_app, name="eval")


def _err(message: str) -> None:
    typer.echo(message, err=True)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"palimpsest {version('palimpsest')}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Long-term memory server for AI agents: GraphQL over Neo4j, scoped by signed run tokens."""


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
    if settings.sql_backend == "postgres" and settings.postgres_managed:
        from palimpsest import postgres_local

        postgres_local.start(settings, say=_err)
    install_assets(settings.graphiql_dir)
    if settings.token_secret is None and settings.token_public_key_file is None:
        token = mint(load_keys(settings), tenant="dev", user="dev-user", agent="dev-agent")
        _err(f"development token (tenant dev, user dev-user, agent dev-agent):\n{token}")
    _err(f"GraphiQL: http://{settings.host}:{settings.port}/graphql")
    if settings.metrics_port is not None:
        _err(f"metrics: http://{settings.metrics_host}:{settings.metrics_port}/metrics")
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level="warning")


@neo4j_app.command("install")
def neo4j_install() -> None:
    """Fetch the Neo4j jars from Maven Central and write the configuration."""
    from palimpsest import neo4j_local

    neo4j_local.install(Settings(), say=_err)


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


@postgres_app.command("start")
def postgres_start() -> None:
    """Start the managed PostgreSQL (initdb on first use) and wait until it accepts logins."""
    from palimpsest import postgres_local

    s = postgres_local.start(Settings(), say=_err)
    _err(f"postgres {s.dsn}")


@postgres_app.command("stop")
def postgres_stop() -> None:
    """Stop the managed PostgreSQL (fast shutdown: open transactions roll back)."""
    from palimpsest import postgres_local

    postgres_local.stop(Settings(), say=_err)


@postgres_app.command("status")
def postgres_status() -> None:
    """Say whether the managed PostgreSQL is initialised and running; exit 1 when not running."""
    from palimpsest import postgres_local

    s = postgres_local.status(Settings())
    typer.echo(f"installed={s.installed} running={s.running} pid={s.pid} {s.dsn} home={s.home}")
    if not s.running:
        raise typer.Exit(1)


@token_app.command("mint")
def token_mint(
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    user: Annotated[str | None, typer.Option(help="User id.")] = None,
    agent: Annotated[str | None, typer.Option(help="Agent name.")] = None,
    admin: Annotated[bool, typer.Option(help="Grant the tenant admin role.")] = False,
    operator: Annotated[
        bool, typer.Option(help="Grant the platform operator role (the only one with GLOBAL).")
    ] = False,
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
    flags = ((Role.ADMIN, admin), (Role.OPERATOR, operator), (Role.CONSOLIDATOR, consolidator))
    roles = {r for r, on in flags if on}
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


class SqlBackend(StrEnum):
    SQLITE = "sqlite"
    POSTGRES = "postgres"


@bench_app.command("sql")
def bench_sql(
    n: Annotated[int, typer.Option(min=1, help="Statements per kind (insert, select).")] = 2000,
    backend: Annotated[
        list[SqlBackend] | None,
        typer.Option(help="Backend to measure (repeat); default both, in one run."),
    ] = None,
) -> None:
    """SQL Memory: inserts and point selects per second, GraphQL against the bare engine."""
    from palimpsest_bench import sql

    chosen = [b.value for b in backend] if backend else list(sql.BACKENDS)
    _print_json(sql.run(Settings(), n=n, say=_err, backends=chosen))


@bench_app.command("attack")
def bench_attack(
    requests: Annotated[int, typer.Option(min=1, help="At least this many requests.")] = 10_000,
    concurrency: Annotated[int, typer.Option(min=1, help="Requests in flight.")] = 6,
    seed: Annotated[int, typer.Option(help="Seed of the generated arguments.")] = 1,
) -> None:
    """Attack matrix: canaries everywhere, every field as every principal; counts leaks."""
    from palimpsest_bench import attack

    _print_json(attack.run(Settings(), requests, concurrency, seed, say=_err))


@bench_app.command("load")
def bench_load(
    rate: Annotated[float, typer.Option(min=0.1, help="Requests per second (open loop).")] = 200,
    seconds: Annotated[float, typer.Option(min=1, help="How long to send.")] = 60,
    principals: Annotated[int, typer.Option(min=1, help="Distinct callers.")] = 40,
    seed: Annotated[int, typer.Option(help="Seed of the workload mix.")] = 1,
    replicas: Annotated[
        int, typer.Option(min=1, help="API processes sharing the load (round robin).")
    ] = 1,
) -> None:
    """Mixed workload (recall, search, key/value, facts, SQL) from many principals."""
    from palimpsest_bench import load

    _print_json(load.run(Settings(), rate, seconds, principals, seed, say=_err, replicas=replicas))


@bench_app.command("fuzz")
def bench_fuzz(
    operations: Annotated[int, typer.Option(min=1, help="Generated requests to send.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Hypothesis seed.")] = 1,
) -> None:
    """Schema-driven fuzzing (hypothesis-graphql): counts INTERNAL and untyped 5xx replies."""
    from palimpsest.identity.tokens import load_keys
    from palimpsest.server import serve_in_thread
    from palimpsest_bench.fuzz import run_fuzz

    settings = Settings().model_copy(update={"log_level": "WARNING", "rate_limit_per_second": 0})
    with serve_in_thread(settings) as url:
        _print_json(run_fuzz(url, load_keys(settings), operations, seed))


@bench_app.command("faults")
def bench_faults(
    kills: Annotated[int, typer.Option(min=1, help="SIGKILLs (Neo4j, or the API).")] = 20,
    home: Annotated[
        Path | None, typer.Option(help="Home of the fault server (default: a fresh temp dir).")
    ] = None,
    bolt_port: Annotated[int, typer.Option(help="Bolt port of the fault server.")] = 7698,
    http_port: Annotated[int, typer.Option(help="HTTP port of the fault server.")] = 7485,
    keep: Annotated[bool, typer.Option(help="Keep a fresh temp home afterwards.")] = False,
) -> None:
    """SIGKILL a separate Neo4j (and the API) during batches; count lost and half-written."""
    from palimpsest_bench import faults

    _print_json(
        faults.run(
            Settings(), kills, _err, home=home, bolt_port=bolt_port, http_port=http_port, keep=keep
        )
    )


@bench_app.command("edge")
def bench_edge(
    url: Annotated[
        str | None, typer.Option(help="A running API to measure (default: one in-process).")
    ] = None,
    attackers: Annotated[int, typer.Option(min=1, help="Concurrent attack threads.")] = 4,
    rounds: Annotated[int, typer.Option(min=1, help="Attack requests per thread.")] = 2,
) -> None:
    """The issue-11 attack documents: time per refusal, and /healthz latency meanwhile."""
    from palimpsest_bench import edge

    _print_json(edge.run(Settings(), url=url, attackers=attackers, rounds=rounds, say=_err))


BenchChunks = Annotated[int, typer.Option("--chunks", min=1, help="Chunks in the dataset.")]
BenchQueries = Annotated[int, typer.Option(min=1, help="Measured queries.")]


Synthetic = Annotated[
    bool,
    typer.Option(
        "--synthetic-vectors",
        help="Load the dataset with hash-derived vectors (database speed; timings only).",
    ),
]


@bench_app.command("recall-latency")
def bench_recall_latency(
    chunks: BenchChunks = 10_000, queries: BenchQueries = 300, synthetic: Synthetic = False
) -> None:
    """Scoped `search` latency through GraphQL over HTTP against the same raw work (ms)."""
    import asyncio

    from palimpsest_bench import recall_bench

    run = recall_bench.run_latency(Settings(), chunks, queries, say=_err, synthetic=synthetic)
    _print_json(asyncio.run(run))


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


RecordLimit = Annotated[
    int | None, typer.Option(min=1, help="Only the first N records of each file (smoke runs).")
]


@eval_app.command("situatedqa")
def eval_situatedqa(data: DataDir, keep: KeepData = False, limit: RecordLimit = None) -> None:
    """SituatedQA: load timelines as facts, answer as-of queries, exact match by date type."""
    import asyncio

    from palimpsest_bench import temporal

    run = temporal.run_situatedqa(Settings(), data, _err, keep=keep, limit=limit)
    _print_json(asyncio.run(run))


@eval_app.command("yago11k")
def eval_yago11k(data: DataDir, keep: KeepData = False, limit: RecordLimit = None) -> None:
    """YAGO11k: load temporal KG facts, answer point-in-time probes, exact set match."""
    import asyncio

    from palimpsest_bench import temporal

    _print_json(asyncio.run(temporal.run_yago11k(Settings(), data, _err, keep=keep, limit=limit)))


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
Docs = Annotated[
    int | None,
    typer.Option(
        min=1, help="Only the first N documents and the queries answered inside them (indicative)."
    ),
]
Ablate = Annotated[
    bool,
    typer.Option(
        "--ablate", help="Also print the headline metric with each recall lever removed in turn."
    ),
]


def _recall_eval(
    dataset: str,
    data: Path,
    mode: RecallMode,
    top_k: int | None,
    pool: int | None,
    keep: bool,
    embed_cache: Path | None,
    limit: int | None,
    ablation: bool,
    docs: int | None,
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
        ablation=ablation,
        docs=docs,
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
        ablate: Ablate = False,
        docs: Docs = None,
    ) -> None:
        _recall_eval(dataset, data, mode, top_k, pool, keep, embed_cache, limit, ablate, docs)

    command.__doc__ = summary
    eval_app.command(dataset)(command)


_recall_command(
    "locomo", "LoCoMo: sessions as documents, turns as chunks; recall@5/10, nDCG@10, MRR@10."
)
_recall_command("scifact", "SciFact: one document per abstract; nDCG@10 and recall@100.")
_recall_command("timeqa", "TimeQA: pages as documents, paragraphs as chunks; nDCG@10 and MRR@10.")


def main() -> None:
    """Run the command; an expected failure prints one line and exits 1, never a traceback."""
    try:
        app()
    except KeyboardInterrupt:
        _err("palimpsest: interrupted")
        sys.exit(130)
    except Exception as e:
        message = expected_failure(e)
        if message is None:
            raise
        _err(f"palimpsest: {message}")
        sys.exit(1)


def expected_failure(e: BaseException) -> str | None:
    """One line for a failure the user can act on; None for a bug (keep its traceback)."""
    from neo4j.exceptions import DriverError, Neo4jError
    from pydantic import ValidationError

    from palimpsest.errors import PalimpsestError

    if isinstance(e, PalimpsestError):
        return e.message
    if isinstance(e, ValidationError):
        problems = []
        for err in e.errors():
            name = "_".join(str(p) for p in err["loc"]).upper()
            text = err["msg"].removeprefix("Value error, ")
            problems.append(f"PALIMPSEST_{name}: {text}" if name else text)
        return f"invalid settings: {'; '.join(problems)}"
    if isinstance(e, DriverError | Neo4jError):
        return f"neo4j: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
    if isinstance(e, OSError):
        return str(e)
    return None
