"""Result limits shared by both backends: the column cap and rows capped while produced."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from palimpsest.errors import QuotaExceeded
from palimpsest.sqlmem.core import codec


def check_width(width: int, max_columns: int) -> None:
    if width > max_columns:
        raise QuotaExceeded(
            f"the query returns {width} columns; the limit is {max_columns} "
            "(name the columns you need)",
            limit="sqlMaxColumns",
            maxColumns=max_columns,
            columns=width,
        )


def capped_rows(
    produced: Iterable[Sequence[Any]], max_rows: int, max_result_bytes: int
) -> tuple[list[list[Any]], str | None]:
    """Rows up to the row cap and the result size cap; the limit that stopped them.

    Each row is measured as the JSON it becomes before it is converted, so a row that does
    not fit is never encoded; a first row that alone does not fit is refused.
    """
    rows: list[list[Any]] = []
    size = 2  # the enclosing []
    for raw in produced:
        if len(rows) >= max_rows:
            return rows, "sqlMaxRows"
        cost = codec.row_size(raw)
        if size + cost > max_result_bytes:
            if not rows:
                raise QuotaExceeded(
                    f"the first row alone is about {cost} bytes as JSON; the result limit "
                    f"is {max_result_bytes} (select fewer columns, or substr() parts)",
                    limit="sqlMaxResultBytes",
                    maxResultBytes=max_result_bytes,
                    rowBytes=cost,
                )
            return rows, "sqlMaxResultBytes"
        rows.append([codec.to_json(v) for v in raw])
        size += cost
    return rows, None
