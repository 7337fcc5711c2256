"""The time-range boosts (recall lever 6, time resolved at ingest; docs/reference/recall.md).

A chunk's time expressions were resolved to day ranges when it was written
(``domain.time.timerefs``). A question that names dates prefers chunks whose ranges overlap
them (``timeRange``), the more the more specific the question's date (a day most, a month
less, a year not at all: the year lever has that); a question naming a span of a year or
more ("from 1975 to Feb 2016") prefers chunks whose ranges cover it (``timeSpan``, graded by
``timerefs.span_overlap``); a "when" question prefers chunks whose
ranges are specific (``whenSpecific``, graded the same way). Both multiply the
fused score, never filter; rows without ranges (notes, facts, chunks written before ranges
were kept) are simply not boosted.
"""

from __future__ import annotations

from collections.abc import Sequence

from palimpsest.domain.ranking import cues
from palimpsest.domain.ranking import fusion as pure
from palimpsest.domain.time import timerefs
from palimpsest.resolvers.recall.hits import BoostPart


def boosts(
    ranges: Sequence[timerefs.Range], q: cues.QuestionCues, lv: pure.Levers
) -> list[BoostPart]:
    if not ranges:
        return []
    out: list[BoostPart] = []
    if lv.time_boost > 1.0 and (matched := q.range_match(ranges)) > 0.0:
        out.append(BoostPart("timeRange", 1.0 + (lv.time_boost - 1.0) * matched))
    if lv.time_span_boost > 1.0 and (covered := q.span_match(ranges)) > 0.0:
        out.append(BoostPart("timeSpan", 1.0 + (lv.time_span_boost - 1.0) * covered))
    if lv.time_when_boost > 1.0 and q.when:
        specific = max(timerefs.specificity(r.days) for r in ranges)
        if specific > 0.0:
            out.append(BoostPart("whenSpecific", 1.0 + (lv.time_when_boost - 1.0) * specific))
    return out
