"""Fusion per kind of question, chosen by leave-one-conversation-out (``eval locomo --cv``).

One ingest, one capture, many rankings. Every question is asked once through the real
resolver with the pool of a top-10 request but ``top_k`` = the resolver's maximum, so every
fused candidate comes back with its explain: its rank in each leg (or "beyond the pool") and
which boosts fired, graded ones with their grade. Any setting of the grid re-ranks those
candidates here exactly as ``resolvers.recall`` fuses and boosts (the same RRF sum, the same
first-seen order on ties, the same products), so a grid point costs no database work.
``check`` compares the defaults' re-ranking with the real top-10 to show it is exact.

The selection (``folds``, pure): for each held-out conversation, each form's setting is the
grid point with the best mean recall@10 + nDCG@10 over that form's questions of the other
conversations, kept only when it beats the defaults there by ``MIN_GAIN`` on at least
``MIN_SUPPORT`` questions (else the defaults); the held-out conversation is then ranked with
its forms' choices and scored. Categories 1-4 only, as the headline.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from palimpsest.domain.ranking.fusion import Levers, Source
from palimpsest.identity import Scope
from palimpsest.resolvers.facts.ledger import time_view
from palimpsest.resolvers.recall.forms import Form, classify
from palimpsest.resolvers.recall.planner import Mode, RecallRequest, recall
from palimpsest.resolvers.services import Services
from palimpsest_bench.common import QUERY_CONCURRENCY, principal
from palimpsest_bench.common import gather_limited as limited
from palimpsest_bench.recall_cv_select import (
    GRID,
    MIN_GAIN,
    MIN_SUPPORT,
    Floats,
    Setting,
    consensus,
    diff,
    folds,
    nested,
    per_fold,
    stability,
)
from palimpsest_bench.recall_data import Dataset, Query
from palimpsest_bench.recall_summary import HEADLINE_CATEGORIES

SCOPE = Scope.USER  # as recall_eval
BOOSTS = ("date_boost", "when_boost", "year_boost", "speaker_boost")
# explain's boost names -> the lever whose factor they carry (graded ones below).
FLAGS = {
    "observedDate": "date_boost",
    "whenQuestion": "when_boost",
    "yearRange": "year_boost",
    "speaker": "speaker_boost",
}
GRADED = {"timeRange": "time_boost", "whenSpecific": "time_when_boost"}
CAPTURE_TIME_WHEN = 2.0  # on at capture so its grade shows; the grade is (factor - 1) / 1
K = 10


@dataclass(frozen=True, slots=True)
class Candidates:
    """One question's fused candidates, in the resolver's first-seen order."""

    vector: Floats  # rank in the vector leg; 0 = not listed
    fulltext: Floats
    beyond_vector: npt.NDArray[np.bool_]  # listed as ranked past the pool there
    beyond_fulltext: npt.NDArray[np.bool_]
    flags: dict[str, Floats]  # lever -> 0/1 per candidate, or the grade for graded ones
    relevant: npt.NDArray[np.bool_]
    gold: int  # how many relevant units the question has
    units: tuple[str, ...]  # the candidates' unit ids


def defaults(levers: Levers, fulltext_weight: float = 1.0) -> Setting:
    out: Setting = {name: getattr(levers, name) for name in GRID if name != "fulltext_weight"}
    out["fulltext_weight"] = fulltext_weight
    return out


def grid() -> list[Setting]:
    names = list(GRID)
    return [dict(zip(names, combo, strict=True)) for combo in itertools.product(*GRID.values())]


async def capture(
    svc: Services, tenant: str, unit_of_chunk: Mapping[str, str], q: Query
) -> Candidates:
    """The question's fused candidates with what ranking them needs."""
    s = svc.settings
    levers = replace(
        Levers.of(s), time_when_boost=CAPTURE_TIME_WHEN, session_prior=0.0, question_forms=False
    )
    req = RecallRequest(
        query=q.text,
        top_k=200,
        sources=frozenset({Source.DOCUMENTS}),
        view=time_view(svc, None, None),
        rrf_k=s.recall.rrf_k,
        vector_weight=1.0,
        fulltext_weight=1.0,
        mode=Mode.HYBRID,
        pool=s.recall.pool_factor * K,
        levers=levers,
    )
    result = await recall(svc, principal(tenant, q.owner), [SCOPE], req)
    units = [unit_of_chunk[h.id] for h in result.hits]
    n = len(result.hits)
    vec, ft = np.zeros(n), np.zeros(n)
    bv, bf = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    flags = {name: np.zeros(n) for name in [*FLAGS.values(), *GRADED.values()]}
    for i, hit in enumerate(result.hits):
        assert hit.explain is not None
        for part in hit.explain.legs:
            if part.leg == "vector":
                bv[i] = part.beyond_depth
                vec[i] = 0 if part.beyond_depth else part.rank
            else:
                bf[i] = part.beyond_depth
                ft[i] = 0 if part.beyond_depth else part.rank
        for boost in hit.explain.boosts:
            if boost.lever in FLAGS:
                flags[FLAGS[boost.lever]][i] = 1.0
            elif boost.lever in GRADED:
                lever = GRADED[boost.lever]
                factor = float(getattr(levers, lever))
                flags[lever][i] = (boost.factor - 1.0) / (factor - 1.0)
    # The resolver's first-seen order: vector-listed rows by vector rank, then the rest.
    order = sorted(range(n), key=lambda i: (0, vec[i]) if vec[i] else (1, ft[i]))
    rel = np.array([units[i] in q.relevant for i in order], dtype=bool)
    return Candidates(
        vec[order], ft[order], bv[order], bf[order],
        {k: v[order] for k, v in flags.items()}, rel, len(q.relevant),
        tuple(units[i] for i in order),
    )  # fmt: skip


def scores(c: Candidates, s: Setting, rrf_k: int, pool: int) -> Floats:
    """The fused and boosted score of each candidate under setting ``s`` (as the resolver)."""
    beyond = 1.0 / (rrf_k + pool + 1) if s["absent_at_depth"] else 0.0
    v = np.where(c.vector > 0, 1.0 / (rrf_k + c.vector), np.where(c.beyond_vector, beyond, 0.0))
    f = np.where(
        c.fulltext > 0, 1.0 / (rrf_k + c.fulltext), np.where(c.beyond_fulltext, beyond, 0.0)
    )
    out = v + float(s["fulltext_weight"]) * f
    for lever in BOOSTS:
        factor = float(s[lever])
        if factor > 1.0:
            out = out * np.where(c.flags[lever] > 0, factor, 1.0)
    for lever in GRADED.values():
        factor = float(s[lever])
        if factor > 1.0:
            out = out * (1.0 + (factor - 1.0) * c.flags[lever])
    return np.asarray(out, dtype=np.float64)


_DISCOUNT = 1.0 / np.log2(np.arange(2, K + 2))


def metrics(c: Candidates, s: Setting, rrf_k: int, pool: int) -> tuple[float, float]:
    """recall@10 (any evidence in the top 10) and binary nDCG@10."""
    if c.gold == 0:
        return 0.0, 0.0
    top = np.argsort(-scores(c, s, rrf_k, pool), kind="stable")[:K]
    hits = c.relevant[top]
    ideal = float(_DISCOUNT[: min(c.gold, K)].sum())
    return float(hits.any()), float((_DISCOUNT[: len(hits)] * hits).sum()) / ideal


def ranked(c: Candidates, s: Setting, rrf_k: int, pool: int) -> list[int]:
    return [int(i) for i in np.argsort(-scores(c, s, rrf_k, pool), kind="stable")[:K]]


def table(
    cands: Sequence[Candidates], settings: Sequence[Setting], rrf_k: int, pool: int
) -> Floats:
    """``[setting, question, (recall@10, nDCG@10)]``, every setting at once per question
    (the same figures as ``metrics``, vectorised over the settings)."""
    col = {name: np.array([float(s[name]) for s in settings]) for name in GRID}
    beyond = np.where(col["absent_at_depth"] > 0, 1.0 / (rrf_k + pool + 1), 0.0)[:, None]
    fw = col["fulltext_weight"][:, None]
    out = np.zeros((len(settings), len(cands), 2))
    for i, c in enumerate(cands):
        if c.gold == 0 or len(c.units) == 0:
            continue
        v = np.where(c.vector > 0, 1.0 / (rrf_k + np.maximum(c.vector, 1.0)), 0.0)[None, :]
        f = np.where(c.fulltext > 0, 1.0 / (rrf_k + np.maximum(c.fulltext, 1.0)), 0.0)[None, :]
        v = v + beyond * c.beyond_vector[None, :]
        f = f + beyond * c.beyond_fulltext[None, :]
        sc = v + fw * f
        for lever in BOOSTS:
            factor = col[lever][:, None]
            sc = sc * np.where((c.flags[lever][None, :] > 0) & (factor > 1.0), factor, 1.0)
        for lever in GRADED.values():
            factor = np.maximum(col[lever][:, None], 1.0)
            sc = sc * (1.0 + (factor - 1.0) * c.flags[lever][None, :])
        top = np.argsort(-sc, axis=1, kind="stable")[:, :K]
        hits = c.relevant[top]
        ideal = float(_DISCOUNT[: min(c.gold, K)].sum())
        out[:, i, 0] = hits.any(axis=1)
        out[:, i, 1] = (hits * _DISCOUNT[: hits.shape[1]]).sum(axis=1) / ideal
    return out


async def run_cv(
    svc: Services,
    tenant: str,
    ds: Dataset,
    unit_of_chunk: Mapping[str, str],
    real: Sequence[Sequence[str]],
    save: Path | None = None,
) -> dict[str, Any]:
    """Capture every question once, then the grid, the folds and the stability table.
    ``real``: the top-10 of each question of ``ds.queries`` at the settings (the check)."""

    s = svc.settings.recall
    pool = s.pool_factor * K
    kept = [(i, q) for i, q in enumerate(ds.queries) if q.category in HEADLINE_CATEGORIES]
    jobs = [partial(capture, svc, tenant, unit_of_chunk, q) for _, q in kept]
    cands: list[Candidates] = await limited(jobs, QUERY_CONCURRENCY)
    settings = grid()
    base_setting = defaults(
        Levers.of(svc.settings), s.rrf_fulltext_weight / max(s.rrf_vector_weight, 1e-9)
    )
    if base_setting not in settings:
        settings.append(base_setting)
    base = settings.index(base_setting)
    same = sum(
        int([c.units[j] for j in ranked(c, base_setting, s.rrf_k, pool)] == list(real[i][:K]))
        for (i, _), c in zip(kept, cands, strict=True)
    )
    figures = table(cands, settings, s.rrf_k, pool)
    if save is not None:  # for re-analysis without a database: the grid's figures and labels
        np.savez_compressed(save, figures=figures, base=base)
        save.with_suffix(".json").write_text(
            json.dumps({"settings": settings, "forms": [f.value for f in forms_of(kept)],
                        "owners": [q.owner for _, q in kept]})
        )  # fmt: skip
    forms = forms_of(kept)
    owners = [q.owner for _, q in kept]
    rows = folds(forms, owners, figures, settings, base)
    agreed = consensus(rows, settings, base)
    by_form = {
        f.value: _by_form(forms, figures, [i for i, g in enumerate(forms) if g is f], j, base)
        for f, j in agreed.items()
    }
    return {
        "questions": len(kept),
        "forms": dict(Counter(f.value for f in forms)),
        "grid_size": len(settings),
        "defaults": base_setting,
        "check_identical_top10": same,
        "folds": rows,
        "stability": stability(rows),
        "min_support": MIN_SUPPORT,
        "min_gain": MIN_GAIN,
        # The table of the levers chosen alike in 4 of 5 folds: chosen with every fold in
        # view, so its per-conversation figures are not held-out ones (the folds above are).
        "nested": nested(forms, owners, figures, settings, base),
        "consensus": {
            "table": {f.value: diff(settings[j], settings[base]) for f, j in agreed.items()},
            "by_form_all_dev": by_form,
            "per_conversation": per_fold(forms, owners, figures, agreed, base),
        },
    }


def forms_of(kept: Sequence[tuple[int, Query]]) -> list[Form]:
    return [classify(q.text) for _, q in kept]


def _by_form(
    forms: Sequence[Form], figures: Floats, rows: Sequence[int], j: int, base: int
) -> dict[str, Any]:
    return {
        "n": len(rows),
        "table": [round(float(x), 4) for x in figures[j, list(rows)].mean(axis=0)],
        "defaults": [round(float(x), 4) for x in figures[base, list(rows)].mean(axis=0)],
    }
