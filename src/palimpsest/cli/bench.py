"""Benchmarks and evaluations: one JSON object on stdout each, progress on stderr."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from palimpsest.cli.apps import bench_app, err, eval_app, print_json
from palimpsest.config import Settings


@bench_app.command("sql")
def bench_sql(
    n: Annotated[int, typer.Option(min=1, help="Statements per kind (insert, select).")] = 2000,
) -> None:
    """SQL Memory: inserts and point selects per second, GraphQL against bare sqlite3."""
    from palimpsest_bench import sql

    print_json(sql.run(Settings(), n=n, say=err))


BenchChunks = Annotated[int, typer.Option("--chunks", min=1, help="Chunks in the dataset.")]
BenchQueries = Annotated[int, typer.Option(min=1, help="Measured queries.")]


@bench_app.command("recall-latency")
def bench_recall_latency(chunks: BenchChunks = 10_000, queries: BenchQueries = 300) -> None:
    """Scoped `search` latency through GraphQL over HTTP against the same raw work (ms)."""
    import asyncio

    from palimpsest_bench import recall_bench

    print_json(asyncio.run(recall_bench.run_latency(Settings(), chunks, queries, say=err)))


@bench_app.command("filtered-recall")
def bench_filtered_recall(chunks: BenchChunks = 10_000, queries: BenchQueries = 50) -> None:
    """Top-10 overlap with an exact in-scope search at 0.01-100 % scope shares."""
    import asyncio

    from palimpsest_bench import recall_bench

    print_json(asyncio.run(recall_bench.run_filtered(Settings(), chunks, queries, say=err)))


@bench_app.command("ingest")
def bench_ingest(chunks: BenchChunks = 2000) -> None:
    """Chunks per second through import_document against embedding-only throughput."""
    import asyncio

    from palimpsest_bench import recall_bench

    print_json(asyncio.run(recall_bench.run_ingest(Settings(), chunks, say=err)))


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

    print_json(asyncio.run(temporal.run_situatedqa(Settings(), data, err, keep=keep)))


@eval_app.command("yago11k")
def eval_yago11k(data: DataDir, keep: KeepData = False) -> None:
    """YAGO11k: load temporal KG facts, answer point-in-time probes, exact set match."""
    import asyncio

    from palimpsest_bench import temporal

    print_json(asyncio.run(temporal.run_yago11k(Settings(), data, err, keep=keep)))


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
Limit = Annotated[
    int | None,
    typer.Option(min=1, help="Only the first N queries, and load only the documents they need."),
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
) -> None:
    import asyncio

    from palimpsest.resolvers.recall import Mode
    from palimpsest_bench import recall_eval

    result = recall_eval.run(
        Settings(),
        dataset,
        data,
        Mode(mode.value),
        err,
        top_k=top_k,
        pool=pool,
        keep=keep,
        embed_cache=embed_cache,
        limit=limit,
    )
    print_json(asyncio.run(result))


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
