"""The memory cycle: harvest, the queue, consolidation, judging, pending work and the sweep.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.cycle.consolidate import Outcome, WorkerConfig, consolidate_scope
from palimpsest.resolvers.cycle.harvesting import STATUS_PARAMS, SpanDraft, Status, harvest
from palimpsest.resolvers.cycle.judging import MAX_JUDGE_LIMIT, judge_now
from palimpsest.resolvers.cycle.pending import (
    DeadLetter,
    PendingWork,
    dead_letters,
    pending_work,
    requeue,
)
from palimpsest.resolvers.cycle.queue import pending_scopes
from palimpsest.resolvers.cycle.sweep import Swept, sweep_page

__all__ = [
    "MAX_JUDGE_LIMIT",
    "STATUS_PARAMS",
    "DeadLetter",
    "Outcome",
    "PendingWork",
    "SpanDraft",
    "Status",
    "Swept",
    "WorkerConfig",
    "consolidate_scope",
    "dead_letters",
    "harvest",
    "judge_now",
    "pending_scopes",
    "pending_work",
    "requeue",
    "sweep_page",
]
