"""Benchmarks of recall at scale: latency with its stages, the cost curve with scope size
(``--growth``), filtered top-10 overlap and ingest throughput; optionally on a Neo4j of the
bench's own (``--neo4j-home``) for datasets the shared server should not hold."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from palimpsest.cli.apps import err, print_json
from palimpsest.config import Settings
from palimpsest_bench.commands.groups import bench_app

BenchChunks = Annotated[int, typer.Option("--chunks", min=1, help="Chunks in the dataset.")]
BenchQueries = Annotated[int, typer.Option(min=1, help="Measured queries.")]


Synthetic = Annotated[
    bool,
    typer.Option(
        "--synthetic-vectors",
        help="Load the dataset with hash-derived vectors (database speed; timings only).",
    ),
]


OwnHome = Annotated[
    Path | None,
    typer.Option(
        "--neo4j-home",
        help="Run on a Neo4j of the bench's own in this home (started if needed, sized for "
        "--chunks, stopped afterwards), never the shared one; for 1M-chunk datasets.",
    ),
]
OwnBolt = Annotated[int, typer.Option(help="Bolt port of the --neo4j-home server.")]
OwnHttp = Annotated[int, typer.Option(help="HTTP port of the --neo4j-home server.")]
KeepRunning = Annotated[
    bool, typer.Option(help="Leave the --neo4j-home server running afterwards.")
]


def _on_server(
    home: Path | None, chunks: int, bolt: int, http: int, keep: bool, run: Any
) -> dict[str, Any]:
    """Run ``run(settings)`` on the configured Neo4j, or on a server of its own in ``home``
    (the result then names the server, its memory settings and its size on disk)."""
    import asyncio

    if home is None:
        return dict(asyncio.run(run(Settings())))
    from palimpsest_bench import scale_server

    with scale_server.own_server(Settings(), home, chunks, err, bolt, http, keep) as s:
        result = dict(asyncio.run(run(s)))
        result["server"] = {
            "home": str(s.home),
            "bolt_port": s.neo4j.bolt_port,
            "heap": s.neo4j.heap,
            "pagecache": s.neo4j.pagecache,
            "disk_bytes": scale_server.disk_bytes(s),
        }
        return result


class LatencyDataset(StrEnum):
    LATENCY = "latency"
    FILTERED = "filtered"


@bench_app.command("recall-latency")
def bench_recall_latency(
    chunks: BenchChunks = 10_000,
    queries: BenchQueries = 300,
    synthetic: Synthetic = False,
    clients: Annotated[
        int,
        typer.Option(
            min=1, help="Concurrent clients, each one request at a time (2+: the API as a process)."
        ),
    ] = 1,
    workers: Annotated[int, typer.Option(min=1, help="API worker processes (2+ clients).")] = 1,
    embedding_threads: Annotated[
        int | None, typer.Option(min=1, help="The model's threads (default: the setting).")
    ] = None,
    dataset: Annotated[
        LatencyDataset,
        typer.Option(help="latency: one big scope and many small; filtered: filtered-recall's."),
    ] = LatencyDataset.LATENCY,
    neo4j_home: OwnHome = None,
    bolt_port: OwnBolt = 7699,
    http_port: OwnHttp = 7486,
    keep_running: KeepRunning = False,
    growth: Annotated[
        bool,
        typer.Option(
            "--growth",
            help="The cost curve: one scope per --sizes in one database; p50/p95, the "
            "dominant stage and the overlap per size, and a PNG of the curve under --out.",
        ),
    ] = False,
    sizes: Annotated[
        str, typer.Option(help="--growth: scope sizes, comma-separated (1000, 10k, 1M).")
    ] = "1k,10k,100k,1M",
    overlap_queries: Annotated[
        int, typer.Option(min=1, help="--growth: queries per size against the exact oracle.")
    ] = 30,
    out: Annotated[Path, typer.Option(help="--growth: folder the PNG is written to.")] = Path(
        "bench-results"
    ),
    tenant: Annotated[
        str | None, typer.Option(help="--growth: the dataset's tenant (default bench-growth).")
    ] = None,
    tenants: Annotated[
        int | None,
        typer.Option(
            "--tenants",
            min=1,
            help="Many tenants: this many tenants of 50-500 rows in one database (needs "
            "--neo4j-home; the empty database runs on both ports plus one); a 200-row "
            "tenant's search, note and fact writes there against the same tenant alone, "
            "interleaved, --queries rounds.",
        ),
    ] = None,
    load_only: Annotated[
        bool, typer.Option(help="--tenants: load (or complete) the datasets and stop.")
    ] = False,
    load_seconds: Annotated[
        float | None,
        typer.Option(
            min=1,
            help="--tenants: copy no more tenants after this many seconds of loading; the "
            "run measures what is loaded (a later run completes the rest).",
        ),
    ] = None,
    engines: Annotated[
        str | None,
        typer.Option(
            help="--growth: full-text engines compared query by query on one database "
            "(procedure,cypher): p50/p95, the full-text leg's p95 and identical_pools per "
            "size and engine. Needs a Neo4j with Palimpsest's extension."
        ),
    ] = None,
) -> None:
    """Scoped `search` latency through GraphQL over HTTP against the same raw work (ms),
    with the time of each stage; or throughput with several clients; or (--growth) the
    curve of latency with scope size; or (--tenants) one tenant beside many against alone."""
    from palimpsest_bench import recall_latency

    if tenants is not None:
        _many_tenants(tenants, neo4j_home, bolt_port, http_port, queries, load_only, load_seconds)
        return
    if growth:
        from palimpsest_bench import recall_growth
        from palimpsest_bench.engine_names import parse_engines

        try:
            chosen = recall_growth.parse_sizes(sizes)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--sizes") from exc
        try:
            compared = parse_engines(engines) if engines else ()
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--engines") from exc

        def run_growth(s: Settings) -> Any:
            if embedding_threads is not None:
                s = s.replace(embedding_threads=embedding_threads)
            return recall_growth.run_growth(
                s,
                chosen,
                queries,
                min(30, queries),
                overlap_queries,
                synthetic,
                out,
                err,
                tenant,
                compared,
            )

        total = sum(chosen)
        print_json(_on_server(neo4j_home, total, bolt_port, http_port, keep_running, run_growth))
        return
    if engines:
        raise typer.BadParameter("only with --growth", param_hint="--engines")

    def run(s: Settings) -> Any:
        if embedding_threads is not None:
            s = s.replace(embedding_threads=embedding_threads)
        return recall_latency.run_latency(
            s,
            chunks,
            queries,
            say=err,
            synthetic=synthetic,
            clients=clients,
            dataset_kind=dataset.value,
            workers=workers,
        )

    size = chunks + chunks // 9 if dataset is LatencyDataset.FILTERED else chunks
    print_json(_on_server(neo4j_home, size, bolt_port, http_port, keep_running, run))


def _many_tenants(
    tenants: int,
    home: Path | None,
    bolt: int,
    http: int,
    rounds: int,
    load_only: bool,
    load_seconds: float | None,
) -> None:
    if home is None:
        raise typer.BadParameter("--tenants runs on servers of its own", param_hint="--neo4j-home")
    from palimpsest_bench import many_tenants

    figures = many_tenants.run_tenants(
        Settings(), home, tenants, bolt, http, rounds, min(30, rounds), err, load_only, load_seconds
    )
    print_json(figures)


@bench_app.command("vector-options")
def bench_vector_options(
    sizes: Annotated[
        str, typer.Option(help="Scope sizes of the synthetic growth dataset (loaded by it).")
    ] = "10k,100k",
    options: Annotated[
        str,
        typer.Option(
            help="exact_max_rows:ann_floor pairs, comma-separated, compared query by query."
        ),
    ] = "2000:100,20000:100,2000:200,20000:200",
    queries: BenchQueries = 100,
    neo4j_home: OwnHome = None,
    bolt_port: OwnBolt = 7699,
    http_port: OwnHttp = 7486,
    keep_running: KeepRunning = False,
    tenant: Annotated[
        str | None, typer.Option(help="The dataset's tenant (default bench-growth-synth).")
    ] = None,
) -> None:
    """The vector leg's top-10 overlap with the exact in-scope search and its time, per
    (exact threshold, ANN floor), on the growth dataset's scopes."""
    from palimpsest_bench import recall_growth, vector_options

    try:
        chosen = recall_growth.parse_sizes(sizes)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--sizes") from exc
    try:
        pairs = vector_options.parse_options(options)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--options") from exc

    def run(s: Settings) -> Any:
        return vector_options.run(s, chosen, pairs, queries, err, tenant)

    print_json(_on_server(neo4j_home, sum(chosen), bolt_port, http_port, keep_running, run))


@bench_app.command("filtered-recall")
def bench_filtered_recall(
    chunks: BenchChunks = 10_000,
    queries: BenchQueries = 50,
    synthetic: Synthetic = False,
    neo4j_home: OwnHome = None,
    bolt_port: OwnBolt = 7699,
    http_port: OwnHttp = 7486,
    keep_running: KeepRunning = False,
) -> None:
    """Top-10 overlap with an exact in-scope search at 0.01-100 % scope shares."""
    from palimpsest_bench import recall_bench

    def run(s: Settings) -> Any:
        return recall_bench.run_filtered(s, chunks, queries, say=err, synthetic=synthetic)

    # 1.111 x N chunks: the five shares add up to 111.11 % of N.
    size = chunks + chunks // 9
    print_json(_on_server(neo4j_home, size, bolt_port, http_port, keep_running, run))


@bench_app.command("ingest")
def bench_ingest(chunks: BenchChunks = 2000) -> None:
    """Chunks per second through import_document against embedding-only throughput."""
    import asyncio

    from palimpsest_bench import recall_bench

    print_json(asyncio.run(recall_bench.run_ingest(Settings(), chunks, say=err)))
