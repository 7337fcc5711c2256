"""The load bench's figures: the run's percentiles, by operation and by minute."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from palimpsest_bench.recall_bench import percentile


@dataclass
class Results:
    latencies: dict[str, list[float]] = field(default_factory=dict)
    # (seconds since the start when the request was due, latency ms, ok, operation)
    timeline: list[tuple[float, float, bool, str]] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    # (seconds since the start, the machine's CPU steal so far in seconds): on a virtual
    # machine a minute that slows down for no reason of ours shows stolen time here.
    steal: list[tuple[float, float]] = field(default_factory=list)


def summary(results: Results, elapsed: float, rate: float, seconds: float) -> dict[str, Any]:
    every = [x for xs in results.latencies.values() for x in xs]
    by_op = {
        op: {
            "n": len(xs),
            "p50": round(percentile(xs, 50), 1),
            "p95": round(percentile(xs, 95), 1),
            "p99": round(percentile(xs, 99), 1),
            "errors": results.errors.get(op, 0),
        }
        for op, xs in sorted(results.latencies.items())
    }
    return {
        "rate_target": rate,
        "seconds_target": seconds,
        "requests": len(every),
        "achieved_rate": round(len(every) / elapsed, 1),
        "p50_ms": round(percentile(every, 50), 1),
        "p95_ms": round(percentile(every, 95), 1),
        "p99_ms": round(percentile(every, 99), 1),
        "errors": sum(results.errors.values()),
        "error_examples": results.examples,
        "by_operation": by_op,
        "cpu_steal_s": round(_growth(results.steal, 0.0, elapsed + 1.0), 2),
        "by_minute": by_window(results.timeline, 60.0, results.steal),
    }


def by_window(
    timeline: list[tuple[float, float, bool, str]],
    width: float,
    steal: list[tuple[float, float]] | None = None,
) -> list[dict[str, Any]]:
    """p50/p95 and errors of the requests due in each ``width`` seconds, and the p50 of each
    operation: a server that slows down as the run goes on shows here, not in the run's
    percentiles, and the operations say which work grew. ``steal``: samples of the machine's
    CPU steal; each window then says how many CPU seconds the hypervisor took in it."""
    windows: dict[int, list[tuple[float, bool, str]]] = {}
    for due, latency, ok, op in timeline:
        windows.setdefault(int(due // width), []).append((latency, ok, op))
    out = []
    for w, rows in sorted(windows.items()):
        ops: dict[str, list[float]] = {}
        for latency, _, op in rows:
            ops.setdefault(op, []).append(latency)
        window: dict[str, Any] = {
            "from_s": int(w * width),
            "requests": len(rows),
            "p50_ms": round(percentile([x for x, _, _ in rows], 50), 1),
            "p95_ms": round(percentile([x for x, _, _ in rows], 95), 1),
            "errors": sum(1 for _, ok, _ in rows if not ok),
            "p50_ms_by_operation": {
                op: round(percentile(xs, 50), 1) for op, xs in sorted(ops.items())
            },
        }
        if steal:
            window["cpu_steal_s"] = round(_growth(steal, w * width, (w + 1) * width), 2)
        out.append(window)
    return out


def _growth(samples: list[tuple[float, float]], start: float, end: float) -> float:
    """How much a counter sampled as (time, value) grew between two times (the samples
    nearest inside them)."""
    inside = [v for t, v in samples if start <= t <= end]
    return inside[-1] - inside[0] if len(inside) >= 2 else 0.0
