"""JSON values of the key/value plane: validation, canonical form and the pure reducers.

Nothing here touches the database, so every rule is unit-tested on its own.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from palimpsest.errors import Conflict, InvalidArgument
from palimpsest.notekeys import MAX_EMBED_TEXT_CHARS as MAX_EMBED_TEXT_CHARS

JSON = Any
MAX_DEPTH = 64
MAX_KEY_BYTES = 512
MAX_BOUNDED_LIMIT = 10_000
_INT64 = 2**63


def check_key(key: str) -> str:
    if not key:
        raise InvalidArgument("key must not be empty")
    if len(key.encode()) > MAX_KEY_BYTES:
        raise InvalidArgument(f"key is {len(key.encode())} bytes; the limit is {MAX_KEY_BYTES}")
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in key):
        raise InvalidArgument("key must not contain control characters")
    return key


def encode(value: JSON) -> str:
    """Validate ``value`` as storable JSON and return its canonical text (sorted keys)."""
    _check(value, 0)
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def decode(text: str) -> JSON:
    return orjson.loads(text)


def _check(value: JSON, depth: int) -> None:
    if depth > MAX_DEPTH:
        raise InvalidArgument(f"value nests deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, (bool, str)):
        return
    if isinstance(value, int):
        if not -_INT64 <= value < _INT64:
            raise InvalidArgument("integers must fit in 64 bits")
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgument("numbers must be finite (no NaN or Infinity)")
        return
    if isinstance(value, list):
        for item in value:
            _check(item, depth + 1)
        return
    if isinstance(value, dict):
        for k, item in value.items():
            if not isinstance(k, str):
                raise InvalidArgument("object keys must be strings")
            _check(item, depth + 1)
        return
    raise InvalidArgument(f"a {type(value).__name__} is not a JSON value")


def increment(current: JSON, delta: float) -> int | float:
    if current is None:
        current = 0
    if isinstance(current, bool) or not isinstance(current, (int, float)):
        raise Conflict("the stored value is not a number; use set to overwrite it")
    if isinstance(current, int) and float(delta).is_integer():
        result: int | float = current + int(delta)
    else:
        result = current + delta
    _check(result, 0)
    return result


def deep_merge(current: JSON, patch: JSON) -> JSON:
    """Objects merge key by key, recursively; arrays and scalars in ``patch`` replace."""
    if not isinstance(patch, dict):
        raise InvalidArgument("merge needs a JSON object as its value")
    if current is None:
        return patch
    if not isinstance(current, dict):
        raise Conflict("the stored value is not a JSON object; use set to overwrite it")
    merged = dict(current)
    for k, v in patch.items():
        merged[k] = (
            deep_merge(merged[k], v)
            if isinstance(v, dict) and isinstance(merged.get(k), dict)
            else v
        )
    return merged


def append_dedupe(current: JSON, item: JSON) -> tuple[bool, list[JSON]]:
    """Append ``item`` unless an equal value (canonical JSON equality) is already there."""
    items = _as_list(current)
    wanted = encode(item)
    if any(encode(existing) == wanted for existing in items):
        return False, items
    return True, [*items, item]


def bounded_append(current: JSON, item: JSON, limit: int) -> tuple[int, list[JSON]]:
    """Append ``item`` and keep only the newest ``limit`` items; return how many dropped."""
    if not 1 <= limit <= MAX_BOUNDED_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_BOUNDED_LIMIT}")
    items = [*_as_list(current), item]
    dropped = max(0, len(items) - limit)
    return dropped, items[dropped:]


def _as_list(current: JSON) -> list[JSON]:
    if current is None:
        return []
    if not isinstance(current, list):
        raise Conflict("the stored value is not a JSON array; use set to overwrite it")
    return list(current)


def plain(value: object) -> Any:
    """Dataclasses, enums and datetimes to JSON types, dropping null fields for brevity (tool
    results and the CLI's output)."""
    return _drop_nulls(orjson.loads(orjson.dumps(value)))


def _drop_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value
