"""``--order`` and ``--reconcile`` of the temporal evals (docs/reference/facts.md,
Reconciliation): load the facts as a runtime would, in any order, and let the store close
what each value replaces.

With ``--reconcile`` the eval tenant's ontology declares the dataset's single-valued
relations (``SINGLE``: each with the reason, from the data's own semantics), the loader never
calls ``supersedeFact``, and each fact of a single-valued relation goes with its ``validAt``
only, unless its end is not the start of the next value of the same subject and relation (a
real gap, or an end with nothing after it): then it also sends that end as ``invalidAt``.
Facts of many-valued relations are sent as before. SituatedQA's timelines are independent
annotations of one question, so with ``--reconcile`` each timeline is its own subject (the
question, then `` (timeline N)`` for N > 0) and a query reads the union of them, as the
sorted run's union of timelines.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from enum import StrEnum
from typing import TypeVar

from palimpsest.domain.names import normalise
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest_bench.temporal_data import SQA_PREDICATE, SQA_SUBJECT_TYPE
from palimpsest_bench.yago_data import YAGO_ENTITY_TYPE

T = TypeVar("T")


class Order(StrEnum):
    SORTED = "sorted"  # older values first (today's load order)
    SHUFFLED = "shuffled"
    REVERSED = "reversed"


# Per dataset: relation -> why it holds one value per subject at a time. Every other relation
# of the dataset is many-valued, with its reason in ``MANY``.
SINGLE: dict[str, dict[str, str]] = {
    "situatedqa": {
        SQA_PREDICATE: "an annotated timeline gives the one answer that held over each interval "
        "(SituatedQA's answers change over time: the value of one moment is one answer; "
        "several answers of one row are spellings of it)",
    },
    "yago11k": {
        "isMarriedTo": "one spouse at a time: YAGO dates each marriage, and a new one starts "
        "after the last ended",
        "wasBornIn": "one birthplace",
        "diedIn": "one place of death",
    },
}
MANY: dict[str, dict[str, str]] = {
    "situatedqa": {},
    "yago11k": {
        "playsFor": "a player is in a club's squad and a national team's at the same time",
        "isAffiliatedTo": "a party and other organisations at once (YAGO mixes them)",
        "worksAt": "several employers or posts at once",
        "graduatedFrom": "degrees from several schools, dated by the degree",
        "hasWonPrize": "prizes accumulate",
        "created": "works accumulate",
        "owns": "several holdings at once",
    },
}
_TYPE = {"situatedqa": SQA_SUBJECT_TYPE, "yago11k": YAGO_ENTITY_TYPE}


def ontology(dataset: str) -> str:
    """The eval tenant's ontology: the dataset's subject type with its single-valued lines."""
    single = ", ".join(SINGLE[dataset])
    return f"# {dataset}\nstatus: confirmed\n\n## {_TYPE[dataset]}\nsingle: {single}\n"


def declared(dataset: str) -> dict[str, dict[str, str]]:
    return {"single_valued": SINGLE[dataset], "many_valued": MANY[dataset]}


def ordered(items: Sequence[T], order: Order, seed: int) -> list[T]:
    """The load order: as planned (older values first), shuffled with ``seed``, or reversed."""
    out = list(items)
    if order is Order.SHUFFLED:
        random.Random(seed).shuffle(out)
    elif order is Order.REVERSED:
        out.reverse()
    return out


def timeline_subject(question: str, timeline: int) -> str:
    return question if timeline == 0 else f"{question} (timeline {timeline})"


def as_runtime(drafts: Sequence[FactDraft], single: set[str]) -> list[FactDraft]:
    """Each single-valued fact without the end a successor gives it (see the module doc)."""
    groups: dict[tuple[str, str, str], list[FactDraft]] = defaultdict(list)
    for d in drafts:
        if d.predicate in single and d.valid_at is not None:
            groups[(d.subject.type, normalise(d.subject.name), d.predicate)].append(d)
    starts: dict[tuple[str, str, str], list[tuple[datetime, str]]] = {
        k: sorted((d.valid_at, _object(d)) for d in v if d.valid_at is not None)
        for k, v in groups.items()
    }
    out: list[FactDraft] = []
    for d in drafts:
        key = (d.subject.type, normalise(d.subject.name), d.predicate)
        if d.invalid_at is None or key not in starts or d.valid_at is None:
            out.append(d)
            continue
        start, end, mine = d.valid_at, d.invalid_at, _object(d)
        following = [s for s, o in starts[key] if s > start and o != mine]
        if following and following[0] == end:
            out.append(replace(d, invalid_at=None))
        else:
            out.append(d)
    return out


def with_subject(d: FactDraft, name: str) -> FactDraft:
    return replace(d, subject=EntityRef(d.subject.type, name))


def _object(d: FactDraft) -> str:
    return normalise(d.object.name if d.object else d.object_value or "")
