"""The search table of ``palimpsest memory search``: a reader tells a good hit from a bad one
by its cosine and its rank in each leg, not by the fused score (about 0.03 for every hit)."""

from __future__ import annotations

import io

from rich.console import Console

from palimpsest.cli.people import hits_table
from palimpsest.client import Scope, Source
from palimpsest.client.recall_results import RecallHit


def hit(
    key: str, score: float, cosine: float | None, vector: int | None, text: int | None
) -> RecallHit:
    return RecallHit(
        Source.NOTES, Scope.USER, key, f"text of {key}", score, cosine, vector, text,
        key, None, None, None, None, None, None, None, None,
    )  # fmt: skip


def test_the_table_shows_the_cosine_and_each_legs_rank_next_to_the_score() -> None:
    out = io.StringIO()
    table = hits_table([hit("good", 0.0328, 0.712, 1, 1), hit("weak", 0.0161, None, None, 2)])
    Console(file=out, width=200).print(table)
    lines = out.getvalue().splitlines()
    [header] = [line for line in lines if "┃" in line]
    rows = [line for line in lines if "│" in line]
    assert [c.strip() for c in header.split("┃")[1:5]] == [
        "score",
        "cosine",
        "vector #",
        "full-text #",
    ]
    assert [c.strip() for c in rows[0].split("│")[1:6]] == ["0.0328", "0.712", "1", "1", "notes"]
    assert [c.strip() for c in rows[1].split("│")[1:6]] == ["0.0161", "-", "-", "2", "notes"]
