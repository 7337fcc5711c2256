"""Vector parameters the driver does not spell out.

The driver formats every RUN's query and parameters for its debug log whether that log is on
or not (``" ".join(map(repr, fields))`` in its Bolt 6 ``run``): for a 384-number embedding
that is measurable Python per statement, and parameter values never belong in a log anyway.
``Numbers`` is a ``list`` (so it packs exactly as the list would) whose ``repr`` is short.
"""

from __future__ import annotations

from typing import Any


class Numbers(list[float]):
    """A vector parameter: packs as the list it is, with a short ``repr``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<{len(self)} numbers>"


_SHORT_LIST = 16


def quiet(args: dict[str, Any]) -> dict[str, Any]:
    """``args`` with every list of more than a few floats, at the top or in a list of rows,
    as ``Numbers``; the same dict when there is none."""
    out: dict[str, Any] | None = None
    for key, value in args.items():
        if type(value) is not list or not value:
            continue
        first = value[0]
        if type(first) is float and len(value) > _SHORT_LIST:
            quieted: Any = Numbers(value)
        elif type(first) is dict:
            rows = [quiet(row) if type(row) is dict else row for row in value]
            if all(a is b for a, b in zip(rows, value, strict=True)):
                continue
            quieted = rows
        else:
            continue
        if out is None:
            out = dict(args)
        out[key] = quieted
    return args if out is None else out
