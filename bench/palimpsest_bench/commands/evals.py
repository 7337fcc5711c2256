"""Evaluations on a data folder: one JSON object on stdout each, progress on stderr."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from palimpsest.cli.apps import err, print_json
from palimpsest.config import Settings
from palimpsest_bench.commands.groups import eval_app

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


class LoadOrder(StrEnum):
    SORTED = "sorted"
    SHUFFLED = "shuffled"
    REVERSED = "reversed"


OrderOpt = Annotated[
    LoadOrder,
    typer.Option("--order", help="Load order: older values first (sorted), shuffled, reversed."),
]
Reconcile = Annotated[
    bool,
    typer.Option(
        "--reconcile",
        help="Declare the single-valued relations in the ontology and let the store close "
        "values (never supersedeFact; validAt only, invalidAt only where it is not the next "
        "value's start).",
    ),
]
Seed = Annotated[int, typer.Option(help="Seed of --order shuffled.")]


@eval_app.command("situatedqa")
def eval_situatedqa(
    data: DataDir,
    keep: KeepData = False,
    limit: RecordLimit = None,
    order: OrderOpt = LoadOrder.SORTED,
    reconcile: Reconcile = False,
    seed: Seed = 1,
) -> None:
    """SituatedQA: load timelines as facts, answer as-of queries, exact match by date type."""
    import asyncio

    from palimpsest_bench import temporal
    from palimpsest_bench.temporal_reconcile import Order

    run = temporal.run_situatedqa(
        Settings(), data, err, keep, limit, Order(order.value), reconcile, seed
    )
    print_json(asyncio.run(run))


@eval_app.command("yago11k")
def eval_yago11k(
    data: DataDir,
    keep: KeepData = False,
    limit: RecordLimit = None,
    order: OrderOpt = LoadOrder.SORTED,
    reconcile: Reconcile = False,
    seed: Seed = 1,
) -> None:
    """YAGO11k: load temporal KG facts, answer point-in-time probes, exact set match."""
    import asyncio

    from palimpsest_bench import temporal
    from palimpsest_bench.temporal_reconcile import Order

    run = temporal.run_yago11k(
        Settings(), data, err, keep, limit, Order(order.value), reconcile, seed
    )
    print_json(asyncio.run(run))


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


Folds = Annotated[
    bool,
    typer.Option(
        "--folds",
        help="Also print per-conversation figures (recall@10, nDCG@10, by category) with all "
        "levers and with each lever removed in turn, and in how many it helps.",
    ),
]


CrossValidate = Annotated[
    bool,
    typer.Option(
        "--cv",
        help="Also choose fusion weights and boosts per kind of question by leave-one-"
        "conversation-out and print the per-fold held-out figures (recall_cv).",
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
    via: IngestVia | None = None,
    folds: bool = False,
    cv: bool = False,
) -> None:
    import asyncio

    from palimpsest.resolvers.recall.planner import Mode
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
        ablation=ablation,
        docs=docs,
        via=(via or IngestVia.IMPORT).value,
        folds=folds,
        cv=cv,
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
        ablate: Ablate = False,
        docs: Docs = None,
    ) -> None:
        _recall_eval(dataset, data, mode, top_k, pool, keep, embed_cache, limit, ablate, docs)

    command.__doc__ = summary
    eval_app.command(dataset)(command)


class IngestVia(StrEnum):
    IMPORT = "import"
    HARVEST = "harvest"


Via = Annotated[
    IngestVia | None,
    typer.Option(help="How the data gets in: importDocument, or harvest + consolidate."),
]


@eval_app.command("locomo")
def eval_locomo(
    data: DataDir,
    mode: RecallModeOpt = RecallMode.HYBRID,
    top_k: TopK = None,
    pool: Pool = None,
    keep: KeepDocs = False,
    embed_cache: EmbedCache = None,
    limit: Limit = None,
    ablate: Ablate = False,
    docs: Docs = None,
    via: Via = None,
    folds: Folds = False,
    cv: CrossValidate = False,
) -> None:
    """LoCoMo: sessions as documents, turns as chunks; recall@5/10, nDCG@10, MRR@10.

    --via harvest sends the turns through harvest and the consolidator instead."""
    _recall_eval(
        "locomo", data, mode, top_k, pool, keep, embed_cache, limit, ablate, docs, via, folds, cv
    )


_recall_command("scifact", "SciFact: one document per abstract; nDCG@10 and recall@100.")
_recall_command("timeqa", "TimeQA: pages as documents, paragraphs as chunks; nDCG@10 and MRR@10.")


class LegDataset(StrEnum):
    LOCOMO = "locomo"
    TIMEQA = "timeqa"
    SCIFACT = "scifact"


@eval_app.command("session-leg")
def eval_session_leg(
    dataset: Annotated[LegDataset, typer.Argument(help="The dataset to measure it on.")],
    data: DataDir,
    embed_cache: EmbedCache = None,
    docs: Docs = None,
) -> None:
    """The session-level leg's bench prototype (issue 28, 2b): each document ranked by a
    mean-of-chunks vector and scope-local BM25, chunks reordered by their document's RRF
    terms; figures per variant, against the product's recall (docs/notes/recall-quality.md)."""
    import asyncio

    from palimpsest_bench import session_leg

    print_json(asyncio.run(session_leg.run(dataset.value, data, embed_cache, docs, err)))


@eval_app.command("title-embed")
def eval_title_embed(
    dataset: Annotated[LegDataset, typer.Argument(help="The dataset to measure it on.")],
    data: DataDir,
    embed_cache: EmbedCache = None,
    docs: Docs = None,
) -> None:
    """The bench prototype of the title in the embedded text (issue 28, title context part
    2): the dataset loaded twice, chunks embedded alone and after "Title: <title>"; hybrid and
    vector figures of both (docs/notes/recall-quality.md)."""
    import asyncio

    from palimpsest_bench import title_embed

    print_json(asyncio.run(title_embed.run(dataset.value, data, embed_cache, docs, err)))


@eval_app.command("context-floor")
def eval_context_floor(
    data: DataDir,
    conversations: Annotated[int, typer.Option(min=1, help="Conversations imported.")] = 2,
    questions: Annotated[int, typer.Option(min=1, help="Questions per conversation.")] = 50,
    stride: Annotated[int, typer.Option(min=1, help="Every Nth question of 1-4.")] = 3,
    budget: Annotated[int, typer.Option(min=1, help="The block's budgetTokens.")] = 2000,
    floor: Annotated[
        list[float] | None, typer.Option(help="A minScore to try (repeat; default a sweep).")
    ] = None,
) -> None:
    """LoCoMo: `context`'s block per minScore: precision (evidence lines over lines), recall
    of the evidence turns, and the lines packed for another conversation's questions."""
    from palimpsest_bench import context_floor

    floors = tuple(floor) if floor else context_floor.FLOORS
    print_json(
        context_floor.run(
            Settings(), data, conversations, questions, stride, budget, floors, say=err
        )
    )


class BeamMode(StrEnum):
    VECTOR = "vector"
    FULLTEXT = "fulltext"
    HYBRID = "hybrid"
    BM25 = "bm25"


@eval_app.command("beam")
def eval_beam(
    data: DataDir,
    mode: Annotated[
        BeamMode,
        typer.Option(
            "--mode", help="Which legs of recall to run, or bm25: the plain BM25 baseline."
        ),
    ] = BeamMode.HYBRID,
    via: Via = None,
    pool: Pool = None,
    keep: KeepDocs = False,
    embed_cache: EmbedCache = None,
    limit: Annotated[
        int | None,
        typer.Option(min=1, help="Only the first N conversations (indicative figures)."),
    ] = None,
    ablate: Ablate = False,
    folds: Folds = False,
    details: Annotated[
        bool, typer.Option("--details", help="Also print each question's evidence ranks.")
    ] = False,
) -> None:
    """BEAM: long conversations, a user each, messages as turns; recall_any@10, recall_all@10,
    nDCG@10 by question type, and how often the updated statement ranks above the original."""
    import asyncio

    from palimpsest_bench import beam_eval

    run = beam_eval.run(
        Settings(),
        data,
        mode.value,
        err,
        via=(via or IngestVia.IMPORT).value,
        pool=pool,
        keep=keep,
        embed_cache=embed_cache,
        limit=limit,
        ablation=ablate,
        folds=folds,
        details=details,
    )
    print_json(asyncio.run(run))
