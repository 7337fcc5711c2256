"""Fact pairs a judge is asked about (docs/extraction.md, Judging conflicts): no I/O here.

A pair is two facts of one scope, subject and predicate whose text embeddings are close
(at or above ``PALIMPSEST_JUDGE_COSINE``) but which did not merge. It is recorded when the
newer fact is written; a judge (``Judge``, the model's in ``extraction.judge``) later gives
it a verdict. A verdict is a report: it never closes or deletes a fact.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from palimpsest.schema.models import Fact


class PairVerdict(StrEnum):
    SAME = "same"  # the two say the same thing in other words
    CONFLICT = "conflict"  # they cannot both hold at once
    COMPATIBLE = "compatible"  # both may hold (different aspects, a change over time)


@dataclass(frozen=True, slots=True)
class PairFact:
    """One side of a pair, as a judge is shown it."""

    text: str
    subject: str
    predicate: str
    object: str
    valid_at: datetime | None
    invalid_at: datetime | None
    observed_at: datetime | None


@dataclass(frozen=True, slots=True)
class PendingPair:
    id: str
    older: PairFact
    newer: PairFact


@dataclass(frozen=True, slots=True)
class Ruling:
    verdict: PairVerdict
    reason: str


@dataclass(frozen=True, slots=True)
class Judged:
    """What a judge answered: rulings by pair id (pairs it did not rule on stay pending),
    who judged (``judged_by``), the pairs whose call failed, and its counts."""

    rulings: Mapping[str, Ruling] = field(default_factory=dict)
    judged_by: str = ""
    failed: Sequence[str] = ()
    counts: Mapping[str, int] = field(default_factory=dict)


class TokenCap(Protocol):
    """The tenant's day of model tokens (the extraction cap), as the consolidator keeps it."""

    async def tokens_today(self) -> int: ...

    async def spend_tokens(self, tokens: int) -> int: ...


class Judge(Protocol):
    name: str
    pairs_per_call: int  # the consolidator asks about at most this many pairs per visit

    async def judge(self, pairs: Sequence[PendingPair], cap: TokenCap | None) -> Judged: ...


@dataclass(frozen=True, slots=True)
class JudgeRun:
    """What ``judgeConflicts`` did: pairs asked about, verdicts recorded, verdicts the answer
    held that were dropped, pairs whose call failed or that the token cap refused, and the
    scope's pairs still pending afterwards (a failed pair is asked again, up to its limit)."""

    asked: int
    judged: int
    dropped: int
    failed: int
    refused: int
    pending: int


@dataclass(frozen=True, slots=True)
class FactConflict:
    """A recorded pair as ``factConflicts`` lists it: both facts, whatever their time."""

    id: str
    older: Fact
    newer: Fact
    cosine: float
    created_at: datetime
    verdict: PairVerdict | None
    reason: str | None
    judged_by: str | None
    judged_at: datetime | None
