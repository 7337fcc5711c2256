"""Binding and guarding agent SQL on PostgreSQL: JSON args to ``$n`` values, and the wrapper
that measures every result value in the server before it is sent."""

from __future__ import annotations

from typing import Any

from palimpsest.errors import InvalidArgument
from palimpsest.sqlmem.core import codec
from palimpsest.sqlmem.postgres.errors import too_big
from palimpsest.sqlmem.postgres.validator import MAX_LIKE_PATTERN_CHARS, PgChecked, pattern_too_long

# Types whose values are small and fixed: no size guard is needed around them.
_FIXED = {16, 20, 21, 23, 26, 700, 701, 790, 1082, 1083, 1114, 1184, 1186, 1266, 2950}
_BYTES = {17, 18, 19, 25, 1042, 1043}  # octet_length applies directly


def bind(checked: PgChecked, bound: codec.Params, max_value_bytes: int) -> list[Any]:
    """The ``$n`` values of a checked statement, from JSON args; oversized values refused."""
    if checked.names is None:
        if isinstance(bound, dict):
            if checked.count:
                raise InvalidArgument("the statement uses ? parameters: pass args as a list")
            return []
        values = list(bound)
        if len(values) != checked.count:
            raise InvalidArgument(
                f"the statement has {checked.count} parameters; {len(values)} were given"
            )
    else:
        if not isinstance(bound, dict):
            raise InvalidArgument("the statement uses :name parameters: pass args as an object")
        missing = [n for n in checked.names if n not in bound]
        if missing:
            raise InvalidArgument(f"no value for parameter :{missing[0]}")
        values = [bound[n] for n in checked.names]
    for v in values:
        size = len(v.encode()) if isinstance(v, str) else len(v) if isinstance(v, bytes) else 0
        if size > max_value_bytes:
            raise too_big(max_value_bytes)
    for number in checked.patterns:
        pattern = values[number - 1]
        if isinstance(pattern, str | bytes) and len(pattern) > MAX_LIKE_PATTERN_CHARS:
            raise pattern_too_long(len(pattern))
    if checked.built > max_value_bytes:
        # Built inside one call that no timeout interrupts; refused before it runs.
        raise too_big(max_value_bytes)
    return values


def guarded(inner: str, types: list[tuple[str, int]], cap: int) -> str:
    """The query wrapped so that no value over the cap ever leaves the server."""
    if not types:
        return inner
    columns = []
    for i, (_, oid) in enumerate(types, 1):
        ref = f"q.c{i}"
        if oid in _FIXED:
            columns.append(ref)
            continue
        size = f"octet_length({ref})" if oid in _BYTES else f"octet_length({ref}::text)"
        columns.append(
            f"CASE WHEN {size} <= {cap} THEN {ref} WHEN sqlmem_admin.too_big({size}) THEN {ref} END"
        )
    aliases = ", ".join(f"c{i}" for i in range(1, len(types) + 1))
    return f"SELECT {', '.join(columns)} FROM (\n{inner}\n) AS q({aliases})"  # noqa: S608
