"""The selection half of ``recall_cv`` (pure, no database): the grid of fusion settings,
and, over a table of per-question figures, the leave-one-conversation-out choice per form of
question, its stability across folds, the consensus table and the consensus rule itself held
out (``nested``). The rules are described in ``recall_cv``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from palimpsest.resolvers.recall.forms import Form

Floats = npt.NDArray[np.float64]
Setting = dict[str, float | bool]

# The grid: full-text weight relative to the vector one, then the boosts (1.0 = off) and
# whether a leg's missing row ranks at its depth. The settings' defaults are in each.
GRID: dict[str, tuple[float | bool, ...]] = {
    "fulltext_weight": (0.5, 0.7, 1.0, 1.4, 2.0),
    "date_boost": (1.0, 1.5, 2.0),
    "when_boost": (1.0, 1.3, 1.6),
    "year_boost": (1.0, 1.3),
    "time_boost": (1.0, 1.5, 2.0),
    "time_when_boost": (1.0, 1.3),
    "speaker_boost": (1.0, 1.1, 1.3),
    "absent_at_depth": (True, False),
}
MIN_SUPPORT = 20
MIN_GAIN = 0.01


def select(
    figures: Floats,
    rows: Sequence[int],
    base: int,
    min_support: int,
    min_gain: float,
    distance: Floats | None = None,
) -> int:
    """The best setting (index into ``figures``' first axis) over questions ``rows``: the
    highest mean of recall@10 + nDCG@10, kept only with ``min_support`` questions and a gain
    of ``min_gain`` over ``base`` (else ``base``). Ties go to the setting that changes the
    fewest levers (``distance``, from the defaults; a lever that changes nothing on these
    questions keeps its default), then to the lowest index."""
    if len(rows) < min_support:
        return base
    means = figures[:, list(rows), :].sum(axis=2).mean(axis=1)
    top = np.flatnonzero(means >= means.max() - 1e-12)
    if distance is not None:
        top = top[distance[top] == distance[top].min()]
    best = int(top[0])
    return best if means[best] - means[base] >= min_gain else base


def distances(settings: Sequence[Setting], base: int) -> Floats:
    """How many levers each setting changes from ``settings[base]``."""
    ref = settings[base]
    return np.array([sum(s[k] != ref[k] for k in ref) for s in settings], dtype=np.float64)


def splits(owners: Sequence[str]) -> Iterator[tuple[str, list[int], list[int]]]:
    """Each owner held out in turn: (owner, the other owners' rows, its own rows)."""
    for held in dict.fromkeys(owners):
        yield (
            held,
            [i for i, o in enumerate(owners) if o != held],
            [i for i, o in enumerate(owners) if o == held],
        )


def folds(
    forms: Sequence[Form],
    owners: Sequence[str],
    figures: Floats,
    settings: Sequence[Setting],
    base: int,
    min_support: int = MIN_SUPPORT,
    min_gain: float = MIN_GAIN,
) -> list[dict[str, Any]]:
    """Leave one owner out: choose per form on the others, score on it (pure)."""
    out: list[dict[str, Any]] = []
    far = distances(settings, base)
    for held, train, test in splits(owners):
        chosen: dict[Form, int] = {}
        for form in dict.fromkeys(forms):
            rows = [i for i in train if forms[i] == form]
            chosen[form] = select(figures, rows, base, min_support, min_gain, far)
        picked = np.array([figures[chosen[forms[i]], i] for i in test])
        plain = figures[base, test]
        out.append(
            {
                "held_out": held,
                "n": len(test),
                "per_form": {
                    "recall@10": round(float(picked[:, 0].mean()), 4),
                    "ndcg@10": round(float(picked[:, 1].mean()), 4),
                },
                "defaults": {
                    "recall@10": round(float(plain[:, 0].mean()), 4),
                    "ndcg@10": round(float(plain[:, 1].mean()), 4),
                },
                "chosen": {f.value: diff(settings[j], settings[base]) for f, j in chosen.items()},
                "chosen_index": {f.value: j for f, j in chosen.items()},
            }
        )
    return out


def diff(s: Setting, base: Setting) -> Setting:
    return {k: v for k, v in s.items() if v != base[k]}


def stability(fold_rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per form and lever, the values chosen across folds, and whether one value held in at
    least 4 of them; and in how many folds the per-form choice gained on the held-out one."""
    per: dict[str, dict[str, list[Any]]] = {}
    for row in fold_rows:
        for form, diff in row["chosen"].items():
            levers = per.setdefault(form, {})
            for lever in GRID:
                levers.setdefault(lever, []).append(diff.get(lever, "default"))
    levers_out: dict[str, Any] = {}
    for form, levers in per.items():
        for lever, values in levers.items():
            if all(v == "default" for v in values):
                continue
            value, count = Counter(map(str, values)).most_common(1)[0]
            levers_out.setdefault(form, {})[lever] = {
                "values": values,
                "stable": count >= 4 and value != "default",
            }
    gains = {
        m: sum(1 for r in fold_rows if r["per_form"][m] > r["defaults"][m])
        for m in ("recall@10", "ndcg@10")
    }
    harms = {
        m: sum(1 for r in fold_rows if r["per_form"][m] < r["defaults"][m])
        for m in ("recall@10", "ndcg@10")
    }
    return {"levers": levers_out, "folds_gained": gains, "folds_lost": harms}


def consensus(
    fold_rows: Sequence[Mapping[str, Any]],
    settings: Sequence[Setting],
    base: int,
    need: int = 4,
) -> dict[Form, int]:
    """Per form, the defaults with each lever whose one non-default value was chosen in at
    least ``need`` of the folds (a lever that varies by fold keeps its default); the index of
    that setting in ``settings`` (the full grid holds every combination)."""
    out: dict[Form, int] = {}
    for form in dict.fromkeys(f for r in fold_rows for f in r["chosen"]):
        setting = dict(settings[base])
        for lever in GRID:
            values = Counter(r["chosen"].get(form, {}).get(lever) for r in fold_rows)
            value, count = values.most_common(1)[0]
            if value is not None and count >= need:
                setting[lever] = value
        if setting != settings[base]:
            out[Form(form)] = list(settings).index(setting)
    return out


def nested(
    forms: Sequence[Form],
    owners: Sequence[str],
    figures: Floats,
    settings: Sequence[Setting],
    base: int,
    min_support: int = MIN_SUPPORT,
    min_gain: float = MIN_GAIN,
) -> list[dict[str, Any]]:
    """The consensus rule itself held out: for each conversation, leave-one-out over the other
    four, the levers chosen alike in 3 of those 4 inner folds, scored on the held-out one."""
    out: list[dict[str, Any]] = []
    for held, inner, test in splits(owners):
        rows = folds(
            [forms[i] for i in inner], [owners[i] for i in inner], figures[:, inner],
            settings, base, min_support, min_gain,
        )  # fmt: skip
        agreed = consensus(rows, settings, base, need=3)
        picked = np.array([figures[agreed.get(forms[i], base), i] for i in test])
        plain = figures[base, test]
        out.append(
            {
                "held_out": held,
                "table": {f.value: diff(settings[j], settings[base]) for f, j in agreed.items()},
                "figures": [round(float(x), 4) for x in picked.mean(axis=0)],
                "defaults": [round(float(x), 4) for x in plain.mean(axis=0)],
            }
        )
    return out


def per_fold(
    forms: Sequence[Form],
    owners: Sequence[str],
    figures: Floats,
    chosen: Mapping[Form, int],
    base: int,
) -> list[dict[str, Any]]:
    """Each conversation ranked with one fixed per-form table against the defaults."""
    out: list[dict[str, Any]] = []
    for held, _, test in splits(owners):
        picked = np.array([figures[chosen.get(forms[i], base), i] for i in test])
        plain = figures[base, test]
        out.append(
            {
                "conversation": held,
                "table": [round(float(x), 4) for x in picked.mean(axis=0)],
                "defaults": [round(float(x), 4) for x in plain.mean(axis=0)],
            }
        )
    return out
