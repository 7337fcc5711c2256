"""Measure a default for ``PALIMPSEST_DEDUP_COSINE`` on the dev data (docs/notes/dedup.md).

Negatives are pairs of *different* facts that the write-time gate would still compare: the
same subject, relation and start (YAGO11k: subject, relation, start year; SituatedQA: the
question and its ``valid_at``) with different objects. Positives are one fact written two ways:
the bench's text (``Subject relation Object``, underscores as spaces) and the same fact with
the relation split into words, lower-cased and ended with a full stop; and SituatedQA's
alternative answers of one record (spellings of one answer). Pairs whose objects are one after
``fold`` are left out of both: they merge without a cosine. A threshold must merge
no negative; the figure reported for it is the share of positives it merges.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from palimpsest.config import Settings
from palimpsest.domain.ranking.dedup import cosine, fold
from palimpsest.embedding import load_embedder

_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _name(raw: str) -> str:
    return raw.replace("_", " ")


def _yago(path: Path) -> list[tuple[str, str, str, str]]:
    with path.open(encoding="utf-8") as f:
        return [
            (r["subject"], r["relation"], r["object"], r["start_year"])
            for r in csv.DictReader(f, delimiter="\t")
        ]


def _pairs(groups: dict[Any, list[str]], cap: int, rng: random.Random) -> list[tuple[str, str]]:
    out = [
        (a, b)
        for texts in groups.values()
        for a, b in itertools.combinations(sorted(set(texts)), 2)
        if fold(a) != fold(b)  # objects one after folding merge without any cosine
    ]
    rng.shuffle(out)
    return out[:cap]


def run(
    settings: Settings, dev: Path, cap: int, seed: int, say: Callable[[str], None]
) -> dict[str, Any]:
    rng = random.Random(seed)
    facts = _yago(dev / "yago11k" / "facts.tsv")
    yago: dict[Any, list[str]] = {}
    for s, r, o, start in facts:
        yago.setdefault((s, r, start), []).append(f"{_name(s)} {r} {_name(o)}")
    records: dict[Any, list[list[str]]] = {}
    alternatives: list[tuple[str, str]] = []
    with (dev / "situatedqa" / "facts.jsonl").open(encoding="utf-8") as f:
        for line in f:
            rec = json.loads(line)
            texts = [f"{rec['question']} answer {a}" for a in rec["answers"]]
            records.setdefault((rec["question"], rec["valid_at"]), []).append(texts)
            # One record's answers are spellings of one answer: true duplicates.
            alternatives += [
                (a, b) for a, b in itertools.combinations(texts, 2) if fold(a) != fold(b)
            ]
    # Records of one question and start with no answer in common are different facts.
    situated = [
        (a[0], b[0])
        for recs in records.values()
        for a, b in itertools.combinations(recs, 2)
        if not {fold(t) for t in a} & {fold(t) for t in b}
    ]
    negatives = _pairs(yago, cap, rng) + situated[:cap]
    sample = rng.sample(facts, min(cap, len(facts)))
    positives = [
        (
            f"{_name(s)} {r} {_name(o)}",
            f"{_name(s)} {_CAMEL.sub(' ', r).lower()} {_name(o)}.".lower(),
        )
        for s, r, o, _ in sample
    ] + alternatives[:cap]
    embedder = load_embedder(
        settings.embedding.model, settings.embedding.dimensions, settings.model_dir, 1
    )
    say(f"embedding {len(negatives)} negative and {len(positives)} positive pairs")

    def cosines(pairs: list[tuple[str, str]]) -> list[float]:
        texts = sorted({t for p in pairs for t in p})
        vectors = dict(zip(texts, embedder.embed(texts), strict=True))
        return [cosine(vectors[a], vectors[b]) for a, b in pairs]

    neg_raw, pos = cosines(negatives), sorted(cosines(positives))
    top = sorted(zip(neg_raw, negatives, strict=True), reverse=True)[:5]
    neg = sorted(neg_raw)
    ceiling = max(neg) if neg else 0.0
    chosen = min(1.0, (int(ceiling * 100) + 1) / 100)
    table = {
        f"{t:.2f}": {
            "negatives_merged": sum(c >= t for c in neg) / len(neg),
            "positives_merged": sum(c >= t for c in pos) / len(pos),
        }
        for t in (0.85, 0.88, 0.9, 0.92, 0.94, 0.95, 0.96, 0.97, 0.98, 0.99)
    }
    return {
        "bench": "dedup_cosine",
        "data": str(dev),
        "negative_pairs": len(neg),
        "positive_pairs": len(pos),
        "negative_max": ceiling,
        "negative_p99": neg[int(0.99 * (len(neg) - 1))],
        "positive_median": pos[len(pos) // 2],
        "positive_p05": pos[int(0.05 * (len(pos) - 1))],
        "thresholds": table,
        "chosen": chosen,
        "closest_negatives": [{"cosine": c, "pair": list(p)} for c, p in top],
        "situatedqa_negative_pairs": len(situated[:cap]),
        "situatedqa_alternative_pairs": len(alternatives[:cap]),
        "chosen_positives_merged": sum(c >= chosen for c in pos) / len(pos),
    }
