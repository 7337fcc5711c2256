"""A scripted process table and exported metrics for the load profile's tests."""

from __future__ import annotations

from collections.abc import Iterable

from palimpsest_bench import load_readers as readers

TICKS = 100.0


def stat_line(pid: int, name: str, ppid: int, utime: int, stime: int) -> str:
    # The real layout: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt
    # majflt cmajflt utime stime cutime cstime ...
    return f"{pid} ({name}) S {ppid} 1 1 0 -1 0 0 0 0 0 {utime} {stime} 7 7 20 0 1 0\n"


class FakeProc:
    """A process table: pid -> (name, parent, utime ticks, stime ticks)."""

    def __init__(self, table: dict[int, tuple[str, int, int, int]]) -> None:
        self.table = table

    def stat(self, pid: int) -> str | None:
        if pid not in self.table:
            return None
        name, ppid, u, s = self.table[pid]
        return stat_line(pid, name, ppid, u, s)

    def pids(self) -> Iterable[int]:
        return [*self.table, 99999]  # one that vanished between listing and reading

    def add(self, pid: int, ticks: int) -> None:
        name, ppid, u, s = self.table[pid]
        self.table[pid] = (name, ppid, u + ticks, s)


METRICS = """\
# HELP palimpsest_cypher_seconds Time spent in one Cypher statement
# TYPE palimpsest_cypher_seconds histogram
palimpsest_cypher_seconds_bucket{{le="0.005",statement="GET_MEMORY"}} {g5}
palimpsest_cypher_seconds_bucket{{le="0.01",statement="GET_MEMORY"}} {g10}
palimpsest_cypher_seconds_bucket{{le="+Inf",statement="GET_MEMORY"}} {gn}
palimpsest_cypher_seconds_count{{statement="GET_MEMORY"}} {gn}
palimpsest_cypher_seconds_sum{{statement="GET_MEMORY"}} {gsum}
palimpsest_cypher_seconds_bucket{{le="0.005",statement="UPSERT_MEMORY"}} 0.0
palimpsest_cypher_seconds_bucket{{le="0.01",statement="UPSERT_MEMORY"}} 0.0
palimpsest_cypher_seconds_bucket{{le="+Inf",statement="UPSERT_MEMORY"}} 4.0
palimpsest_cypher_seconds_count{{statement="UPSERT_MEMORY"}} 4.0
palimpsest_cypher_seconds_sum{{statement="UPSERT_MEMORY"}} 0.2
# HELP palimpsest_graphql_operation_seconds GraphQL operation time
# TYPE palimpsest_graphql_operation_seconds histogram
palimpsest_graphql_operation_seconds_bucket{{field="memory",le="+Inf"}} {gn}
palimpsest_graphql_operation_seconds_count{{field="memory"}} {gn}
palimpsest_graphql_operation_seconds_sum{{field="memory"}} {osum}
"""


def metrics(g5: int, g10: int, gn: int, gsum: float, osum: float) -> str:
    return METRICS.format(g5=g5, g10=g10, gn=gn, gsum=gsum, osum=osum)


def histograms(text: str) -> dict[str, readers.Series]:
    return readers.parse_histograms(text, readers.STATEMENT_METRIC, "statement")
