"""What a load run samples: the CPU seconds of process trees from ``/proc``, and the
histograms the API exports, with what ran between two scrapes of them (``load_profile``)."""

from __future__ import annotations

import os
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from prometheus_client.parser import text_string_to_metric_families

STATEMENT_METRIC = "palimpsest_cypher_seconds"
OPERATION_METRIC = "palimpsest_graphql_operation_seconds"


class Proc(Protocol):
    """What the profile reads of ``/proc``: a process's stat line and every pid."""

    def stat(self, pid: int) -> str | None: ...

    def pids(self) -> Iterable[int]: ...


class LinuxProc:
    def stat(self, pid: int) -> str | None:
        try:
            with open(f"/proc/{pid}/stat") as f:
                return f.read()
        except OSError:
            return None

    def pids(self) -> Iterable[int]:
        try:
            names = os.listdir("/proc")
        except OSError:
            return []
        return [int(n) for n in names if n.isdigit()]


def parse_stat(line: str, ticks_per_second: float) -> tuple[int, float]:
    """(parent pid, CPU seconds: utime + stime) of one ``/proc/<pid>/stat`` line. The command
    name may hold spaces and parentheses, so the fields are counted from its last ``)``."""
    fields = line[line.rindex(")") + 2 :].split()
    # After the name: state(0) ppid(1) ... utime(11) stime(12).
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / ticks_per_second


@dataclass
class CpuReader:
    """CPU seconds of process trees: each group's root pids and all their descendants, but
    not a descendant that is another group's root (the generator started the API)."""

    groups: Mapping[str, list[int]]
    proc: Proc = field(default_factory=LinuxProc)
    ticks_per_second: float = field(default_factory=lambda: float(os.sysconf("SC_CLK_TCK")))

    def read(self) -> dict[str, float]:
        stats: dict[int, tuple[int, float]] = {}
        for pid in self.proc.pids():
            line = self.proc.stat(pid)
            if line is not None:
                stats[pid] = parse_stat(line, self.ticks_per_second)
        children: dict[int, list[int]] = {}
        for pid, (parent, _) in stats.items():
            children.setdefault(parent, []).append(pid)
        out: dict[str, float] = {}
        for name, roots in self.groups.items():
            others = {p for g, rs in self.groups.items() if g != name for p in rs}
            seen: set[int] = set()
            todo = [r for r in roots if r in stats]
            while todo:
                pid = todo.pop()
                if pid not in seen:
                    seen.add(pid)
                    todo.extend(c for c in children.get(pid, []) if c not in others)
            out[name] = sum(stats[p][1] for p in seen)
        return out


# -- the exported histograms ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Series:
    """One label's cumulative histogram: count, sum (seconds), bucket bounds -> counts."""

    count: float
    total: float
    buckets: tuple[tuple[float, float], ...]


def parse_histograms(text: str, metric: str, label: str) -> dict[str, Series]:
    counts: dict[str, float] = {}
    sums: dict[str, float] = {}
    buckets: dict[str, list[tuple[float, float]]] = {}
    for family in text_string_to_metric_families(text):
        if family.name != metric:
            continue
        for s in family.samples:
            key = s.labels.get(label, "")
            if s.name.endswith("_count"):
                counts[key] = s.value
            elif s.name.endswith("_sum"):
                sums[key] = s.value
            elif s.name.endswith("_bucket"):
                buckets.setdefault(key, []).append((float(s.labels["le"]), s.value))
    return {
        k: Series(counts[k], sums.get(k, 0.0), tuple(sorted(buckets.get(k, [])))) for k in counts
    }


def histogram_window(before: Mapping[str, Series], after: Mapping[str, Series]) -> dict[str, Any]:
    """Per label, what ran between two scrapes: n, mean ms, and the bound of the bucket that
    holds the 95th percentile (the exported buckets are coarse: 5, 10, 25, 50 ms ...)."""
    out: dict[str, Any] = {}
    for key, a in sorted(after.items()):
        b = before.get(key, Series(0.0, 0.0, ()))
        n = a.count - b.count
        if n <= 0:
            continue
        earlier = dict(b.buckets)
        p95 = None
        for bound, cumulative in a.buckets:
            if cumulative - earlier.get(bound, 0.0) >= 0.95 * n:
                p95 = bound * 1000 if bound != float("inf") else None
                break
        out[key] = {
            "n": int(n),
            "mean_ms": round((a.total - b.total) * 1000 / n, 2),
            "p95_le_ms": p95,
        }
    return out


def scrape(url: str, timeout: float = 5.0) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:  # noqa: S310 (a local port)
            return bytes(r.read()).decode()
    except OSError:
        return None
