"""Hybrid recall, the pure parts: Reciprocal Rank Fusion, the source selector, the observed
time window and the levers' settings. Nothing here touches the database.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import StrEnum

from palimpsest.config import Settings
from palimpsest.errors import InvalidArgument

DEFAULT_RRF_K = 60
DEFAULT_SLACK = timedelta(hours=72)
_SLACK = re.compile(r"^(\d{1,12})\s*([smhd])$", re.ASCII)
# Ten years: far more than any window needs, and its seconds fit a GraphQL Int.
MAX_SLACK = timedelta(days=3650)


class Source(StrEnum):
    FACTS = "facts"
    NOTES = "notes"
    DOCUMENTS = "documents"


class Missing(StrEnum):
    PREFER = "prefer"
    REQUIRE = "require"


RECALL_DEFAULT = frozenset({Source.FACTS, Source.NOTES})
SEARCH_DEFAULT = frozenset(Source)


@dataclass(frozen=True, slots=True)
class Levers:
    """The query-time recall levers and BM25's parameters (docs/reference/recall.md, Levers).
    A boost of 1.0 switches that boost off. The ingest-time lever (the neighbourhood in the
    full-text representation) is ``settings.recall.fulltext_neighbours``."""

    k1: float = 1.2
    b: float = 0.75
    question_words: bool = True
    speaker_strip: bool = True
    speaker_boost: float = 1.1
    date_boost: float = 1.5
    when_boost: float = 1.3
    year_boost: float = 1.3
    time_boost: float = 1.5
    time_when_boost: float = 1.0
    time_span_boost: float = 1.0  # off: it lowered TimeQA dev (docs/notes/recall-quality.md)
    exact_max_rows: int = 2000
    ann_floor: int = 100
    absent_at_depth: bool = True
    session_prior: float = 0.0  # 0: off (``recall_sessions``)
    question_forms: bool = False  # per-form weights (``resolvers/recall_forms``)
    entity_weight: float = 0.0  # 0: off (``recall_entities``)
    # A cosine threshold; 0: off (``recall/newer``). The server's default is the setting's
    # (``recall_newer_first``, on); a request built without settings leaves it off.
    newer_first: float = 0.0
    newer_revision: bool = True  # newer first moves only pairs that read as revisions

    @classmethod
    def of(cls, s: Settings) -> Levers:
        return cls(
            k1=s.recall.fulltext_k1,
            b=s.recall.fulltext_b,
            question_words=s.recall.question_words,
            speaker_strip=s.recall.speaker_strip,
            speaker_boost=s.recall.speaker_boost,
            date_boost=s.recall.date_boost,
            when_boost=s.recall.when_boost,
            year_boost=s.recall.year_boost,
            time_boost=s.recall.time_boost,
            time_when_boost=s.recall.time_when_boost,
            time_span_boost=s.recall.time_span_boost,
            exact_max_rows=s.recall.exact_max_rows,
            ann_floor=s.recall.ann_floor,
            absent_at_depth=s.recall.rrf_absent_at_depth,
            session_prior=s.recall.session_prior,
            question_forms=s.recall.question_forms,
            entity_weight=s.recall.entity_weight,
            newer_first=s.recall.newer_first,
            newer_revision=s.recall.newer_first_revisions,
        )


@dataclass(frozen=True, slots=True)
class Fused:
    id: str
    score: float
    ranks: Mapping[str, int] = field(default_factory=dict)
    beyond: tuple[str, ...] = ()  # the lists that did not hold the id, ranked at depth + 1


def rrf(
    legs: Mapping[str, Sequence[str]],
    k: int = DEFAULT_RRF_K,
    weights: Mapping[str, float] | None = None,
    depth: int | None = None,
    groups: Mapping[str, str] | None = None,
) -> list[Fused]:
    """Fuse ranked id lists: each id scores ``sum(weight / (k + rank))``, ranks from 1.

    With ``depth`` (how deep every list was read), an id that a list of its group does not
    hold is ranked ``depth + 1`` there: a list cut at its depth says only that the id ranks
    below its end, not that it ranks nowhere. Scored as zero instead, any id listed twice,
    however deep, outranks the top of a single list. ``groups`` names each list's group
    (lists over the same rows: the legs of one kind and scope); by default all are one.

    Ties keep first-seen order (legs in the given order, then rank), so equal evidence never
    reorders at random. A leg listing an id twice counts its best rank only.
    """
    if k < 1:
        raise InvalidArgument("the RRF constant k must be at least 1")
    if depth is not None and depth < 1:
        raise InvalidArgument("the RRF depth must be at least 1")
    weight = {leg: 1.0 if weights is None else weights.get(leg, 1.0) for leg in legs}
    group = {leg: "" if groups is None else groups.get(leg, "") for leg in legs}
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for leg, ids in legs.items():
        for rank, item in enumerate(ids, start=1):
            seen = ranks.setdefault(item, {})
            if leg in seen:
                continue
            seen[leg] = rank
            scores[item] = scores.get(item, 0.0) + weight[leg] / (k + rank)
    beyond: dict[str, tuple[str, ...]] = {}
    if depth is not None:
        for item, seen in ranks.items():
            own = group[next(iter(seen))]
            missed = tuple(leg for leg in legs if leg not in seen and group[leg] == own)
            scores[item] += sum(weight[leg] / (k + depth + 1) for leg in missed)
            beyond[item] = missed
    order = {item: i for i, item in enumerate(ranks)}
    fused = sorted(scores, key=lambda item: (-scores[item], order[item]))
    return [Fused(item, scores[item], ranks[item], beyond.get(item, ())) for item in fused]


def parse_sources(names: Iterable[str] | None, default: frozenset[Source]) -> frozenset[Source]:
    """Unknown names are refused (a typo must not widen or drop a filter); empty is refused."""
    if names is None:
        return default
    chosen: set[Source] = set()
    for name in names:
        try:
            chosen.add(Source(name.strip().lower()))
        except ValueError as e:
            known = ", ".join(s.value for s in Source)
            raise InvalidArgument(f"unknown source {name!r} (want some of: {known})") from e
    if not chosen:
        raise InvalidArgument("sources must name at least one of facts, notes, documents")
    return frozenset(chosen)


@dataclass(frozen=True, slots=True)
class Window:
    """The ``observed_at`` window. ``require`` widens both bounds by ``slack``."""

    start: datetime | None
    end: datetime | None
    missing: Missing
    slack: timedelta

    def contains(self, observed: datetime | None) -> bool | None:
        """True/False for dated rows, None for undated ones."""
        if observed is None:
            return None
        slack = self.slack if self.missing is Missing.REQUIRE else timedelta(0)
        if self.start is not None and observed < _shifted(self.start, -slack):
            return False
        return not (self.end is not None and observed >= _shifted(self.end, slack))


def _shifted(when: datetime, by: timedelta) -> datetime:
    """``when + by``, held at the ends of the calendar (a bound near year 1 or 9999)."""
    try:
        return when + by
    except OverflowError:
        edge = datetime.max if by > timedelta(0) else datetime.min
        return edge.replace(tzinfo=when.tzinfo)


def parse_window(
    lo: datetime | None, hi: datetime | None, missing: str | None, slack: str | None
) -> Window | None:
    """None when no window was asked for. Bad values are refused, never ignored."""
    if lo is None and hi is None and missing is None and slack is None:
        return None
    if lo is not None and hi is not None and hi < lo:
        raise InvalidArgument("when.to is before when.from")
    mode = Missing.PREFER
    if missing is not None:
        try:
            mode = Missing(missing.strip().lower())
        except ValueError as e:
            raise InvalidArgument(f"when.missing must be prefer or require, not {missing!r}") from e
    return Window(lo, hi, mode, parse_slack(slack))


def parse_slack(text: str | None) -> timedelta:
    if text is None:
        return DEFAULT_SLACK
    m = _SLACK.match(text.strip().lower())
    if m is None:
        raise InvalidArgument(f"when.slack must look like 72h, 3d, 90m or 30s, not {text[:40]!r}")
    seconds = int(m[1]) * {"s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]
    if seconds > MAX_SLACK.total_seconds():
        raise InvalidArgument(f"when.slack must be at most {MAX_SLACK.days}d")
    return timedelta(seconds=seconds)
