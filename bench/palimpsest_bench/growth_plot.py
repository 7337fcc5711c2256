"""The PNG of ``recall-latency --growth``: p50 and p95 (ms) against scope size, log-log.

matplotlib is the bench's ``plot`` extra (``make install`` installs it); it is imported here
only, with the non-interactive Agg backend, so nothing else in the bench needs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

WIDTH_PX, HEIGHT_PX, DPI = 960, 600, 120


def write_curve(by_size: Mapping[str, Mapping[str, Any]], path: Path, synthetic: bool) -> Path:
    """Write the curve to ``path`` (``WIDTH_PX`` x ``HEIGHT_PX``); returns the path."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import LogLocator, NullFormatter, ScalarFormatter

    rows = sorted(by_size.items(), key=lambda kv: kv[1]["scope_chunks"])
    sizes = [r["scope_chunks"] for _, r in rows]
    fig, ax = plt.subplots(figsize=(WIDTH_PX / DPI, HEIGHT_PX / DPI), dpi=DPI)
    try:
        for key, style in (("p50", "o-"), ("p95", "s--"), ("raw_p50", "^:")):
            ax.plot(sizes, [r[key] for _, r in rows], style, label=key)
        for _name, r in rows:
            stage = r.get("dominant_stage", {}).get("stage")
            if stage:
                ax.annotate(
                    stage, (r["scope_chunks"], r["p95"]), textcoords="offset points",
                    xytext=(0, 6), ha="center", fontsize=8,
                )  # fmt: skip
        ax.set_xscale("log")
        ax.set_yscale("log")
        # Milliseconds as plain numbers (1, 2, 5, 10, 20, 50, ...), not powers of ten.
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_formatter(NullFormatter())
        ax.set_xticks(sizes, [name for name, _ in rows])
        ax.set_xlabel("rows in the searched scope")
        ax.set_ylabel("search latency (ms)")
        vectors = "synthetic vectors" if synthetic else "model vectors"
        ax.set_title(f"Scoped search latency with scope size ({vectors}, top 10)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        path.parent.mkdir(parents=True, exist_ok=True)
        # No bbox_inches="tight": the image keeps exactly the size asked for.
        fig.savefig(path, format="png", dpi=DPI)
    finally:
        plt.close(fig)
    return path
