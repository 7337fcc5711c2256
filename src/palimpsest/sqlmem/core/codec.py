"""JSON in, JSON out: statement arguments and result values of SQL Memory.

Blobs cross the API as ``{"$base64": "<standard base64>"}`` in both directions, and the two
floats JSON cannot carry as ``{"$float": "Infinity"}`` / ``{"$float": "-Infinity"}`` (SQLite
stores NaN as NULL). Every other value is a JSON null, boolean, number or string.
"""

from __future__ import annotations

import base64
import binascii
import math
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

import orjson

from palimpsest.errors import InvalidArgument

BLOB = "$base64"
FLOAT = "$float"
MAX_ARGS = 1000
_INT64 = (-(2**63), 2**63 - 1)
_BLOB_WRAPPER = len('{"$base64":""},')

Params = Sequence[Any] | Mapping[str, Any]


def bind(args: Any) -> Params:
    """Turn a JSON ``args`` value (list = positional, object = named) into sqlite3 parameters."""
    if args is None:
        return ()
    if isinstance(args, list):
        _check_count(len(args))
        return tuple(_value(v, f"args[{i}]") for i, v in enumerate(args))
    if isinstance(args, dict):
        if len(args) == 1 and (BLOB in args or FLOAT in args):
            raise InvalidArgument("args must be a list or an object of named parameters")
        _check_count(len(args))
        # ':name', '@name' and '$name' in the statement all bind to the key "name".
        return {str(k).lstrip(":@$"): _value(v, f"args.{k}") for k, v in args.items()}
    raise InvalidArgument("args must be a list (positional ?) or an object (named :name)")


def to_json(value: Any) -> Any:
    """One result value as a JSON-safe value."""
    if isinstance(value, Decimal):  # PostgreSQL numeric: an integer when it is one
        if value.is_finite() and value == value.to_integral_value():
            whole = int(value)
            if _INT64[0] <= whole <= _INT64[1]:
                return whole
        value = float(value)
    if isinstance(value, bytes):
        return {BLOB: base64.b64encode(value).decode("ascii")}
    if isinstance(value, float) and math.isinf(value):
        return {FLOAT: "Infinity" if value > 0 else "-Infinity"}
    return value


def row_size(row: Sequence[Any]) -> int:
    """The bytes one raw result row takes in the JSON response (``[a,b],``), computed without
    encoding its blobs: a blob becomes ``{"$base64":"..."}`` of 4/3 its length."""
    size = 3
    for value in row:
        if isinstance(value, bytes):
            size += _BLOB_WRAPPER + 4 * ((len(value) + 2) // 3)
        else:
            size += len(orjson.dumps(to_json(value))) + 1
    return size


def _value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, bool | str | float):
        return value
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise InvalidArgument(f"{where} does not fit in a 64-bit integer")
        return value
    if isinstance(value, dict) and set(value) == {BLOB} and isinstance(value[BLOB], str):
        try:
            return base64.b64decode(value[BLOB], validate=True)
        except (binascii.Error, ValueError) as e:
            raise InvalidArgument(f"{where}: {BLOB} must be standard base64") from e
    if (
        isinstance(value, dict)
        and set(value) == {FLOAT}
        and value[FLOAT] in ("Infinity", "-Infinity")
    ):
        return math.inf if value[FLOAT] == "Infinity" else -math.inf
    raise InvalidArgument(
        f"{where} must be null, a boolean, a number, a string or {{{BLOB!r}: ...}}; "
        "store nested JSON as text (json() reads it back)"
    )


def _check_count(n: int) -> None:
    if n > MAX_ARGS:
        raise InvalidArgument(f"{n} arguments; the limit is {MAX_ARGS}")
