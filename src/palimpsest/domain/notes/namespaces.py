"""Namespaced notes: how a namespace (a tuple of labels) and a name map onto one note key,
and the value filters a namespaced search applies (docs/reference/langgraph.md).

A key is ``ns/<label>/<label>...//<name>``. In each label and in the name, ``%``, ``/`` and
the control characters are written as ``%XX`` (their code point in two upper-case hex
digits), so no escaped label holds a ``/``; labels are never empty, so the first ``//`` ends
the namespace. Decoding reverses exactly that, so every
label round-trips, and a namespace prefix is a key prefix that stops at a label boundary.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from palimpsest.domain.notes import values
from palimpsest.errors import InvalidArgument
from palimpsest.notekeys import ROOT as ROOT
from palimpsest.notekeys import SEPARATOR as SEPARATOR
from palimpsest.notekeys import escape as escape
from palimpsest.notekeys import namespace_prefix as namespace_prefix
from palimpsest.notekeys import note_key as note_key

WILDCARD = "*"
_UNESCAPED = re.compile(r"%([0-9A-F]{2})")
_FILTER_KEY = re.compile(r"^[A-Za-z0-9_.-]+$")
_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})
_NON_FINITE = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}
# Every namespace a note key can hold is searchable: a label and its "/" take two bytes at
# least, so no key of values.MAX_KEY_BYTES holds more labels than this.
MAX_LABELS = values.MAX_KEY_BYTES // 2
# orjson writes a float from 1e16 up in exponent form ("1e+16"), which no integer's digits
# are a part of: an equality on an integer that large gets no needle.
_PLAIN_INTEGERS = 10**16


def unescape(text: str) -> str:
    return _UNESCAPED.sub(lambda m: chr(int(m.group(1), 16)), text)


def check_labels(labels: Sequence[str], what: str = "namespace") -> tuple[str, ...]:
    if len(labels) > MAX_LABELS:
        raise InvalidArgument(f"{what} has {len(labels)} labels; the limit is {MAX_LABELS}")
    for label in labels:
        if not label or "." in label:
            raise InvalidArgument(f"{what} labels must be non-empty and contain no '.'")
    return tuple(labels)


def split_key(key: str) -> tuple[tuple[str, ...], str] | None:
    """(namespace, name) of a namespaced key; None for any other key."""
    if not key.startswith(ROOT):
        return None
    path, sep, name = key[len(ROOT) :].partition(SEPARATOR)
    if not sep or not path:
        return None
    return tuple(unescape(label) for label in path.split("/")), unescape(name)


def split_path(path: str) -> tuple[str, ...]:
    """The namespace of a key's namespace part (what ``namespace_prefix`` wrote, less ``/``)."""
    return tuple(unescape(label) for label in path.split("/"))


def literal_head(pattern: Sequence[str]) -> tuple[str, ...]:
    """The labels of a prefix pattern before its first wildcard."""
    head: list[str] = []
    for label in pattern:
        if label == WILDCARD:
            break
        head.append(label)
    return tuple(head)


def matches(namespace: tuple[str, ...], prefix: Sequence[str], suffix: Sequence[str]) -> bool:
    """Whether ``namespace`` starts with ``prefix`` and ends with ``suffix``; ``*`` in either
    stands for exactly one label."""
    if len(namespace) < max(len(prefix), len(suffix)):
        return False
    heads = zip(namespace, prefix, strict=False)
    tails = zip(reversed(namespace), reversed(suffix), strict=False)
    return all(p in (WILDCARD, n) for n, p in heads) and all(p in (WILDCARD, n) for n, p in tails)


def check_filter(filter_: Mapping[str, Any] | None) -> dict[str, Any]:
    """The filter, its keys checked: dotted paths of letters, digits, ``_`` and ``-``;
    operator objects use only ``$eq $ne $gt $gte $lt $lte``."""
    if filter_ is None:
        return {}
    if not isinstance(filter_, Mapping):
        raise InvalidArgument("filter must be a JSON object")
    for key, wanted in filter_.items():
        if not _FILTER_KEY.match(key) or "" in key.split("."):
            raise InvalidArgument(
                f"Invalid filter key: {key[:80]!r}. Filter keys must contain only "
                "alphanumeric characters, underscores, dots, and hyphens."
            )
        if _is_operator_object(wanted):
            unknown = sorted(set(wanted) - _OPERATORS)
            if unknown:
                raise InvalidArgument(f"unsupported filter operator {unknown[0][:20]!r}")
    return dict(filter_)


def needles(filter_: Mapping[str, Any]) -> list[str]:
    """Texts that a note's stored value (canonical JSON: ``values.encode``) must contain to
    pass a checked filter: ``"<last path part>":<value>`` of each equality on a string,
    boolean or integer (a null also matches a missing field, so it has none). A cheap
    prefilter the database applies: it never drops a note that passes (``passes`` decides).
    """
    found = []
    for key, wanted in filter_.items():
        if type(wanted) is int and abs(wanted) >= _PLAIN_INTEGERS:  # a float may equal it
            continue
        if isinstance(wanted, str | bool | int):  # null also matches a missing field
            try:
                text = values.encode(wanted)
            except InvalidArgument:  # not storable (an integer past 64 bits): nothing passes
                continue
            found.append(orjson.dumps(key.rsplit(".", 1)[-1]).decode() + ":" + text)
    return found


def passes(value: Any, filter_: Mapping[str, Any]) -> bool:
    """Whether a note's value meets every condition of a checked filter."""
    return all(_meets(_at(value, key), wanted) for key, wanted in filter_.items())


def _at(value: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _is_operator_object(wanted: Any) -> bool:
    return isinstance(wanted, Mapping) and any(str(k).startswith("$") for k in wanted)


def _meets(actual: Any, wanted: Any) -> bool:
    if _is_operator_object(wanted):
        return all(_apply(actual, op, operand) for op, operand in wanted.items())
    return _equal(actual, wanted)


def _equal(actual: Any, wanted: Any) -> bool:
    """JSON equality, objects by their named fields; ``True`` never equals ``1``."""
    if isinstance(wanted, Mapping):
        return isinstance(actual, dict) and all(_equal(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(wanted)
            and all(_equal(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    if isinstance(wanted, bool) or isinstance(actual, bool):
        return type(actual) is type(wanted) and actual == wanted
    return bool(actual == wanted)


def _number(operand: Any) -> float | int | None:
    """A number to compare in ``$gt $gte $lt $lte``; JSON cannot carry non-finite numbers, so
    there they come as the strings ``Infinity``, ``-Infinity`` and ``NaN``."""
    if isinstance(operand, bool):
        return None
    if isinstance(operand, int | float):
        return operand
    return _NON_FINITE.get(operand) if isinstance(operand, str) else None


def _apply(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return _equal(actual, operand)
    if op == "$ne":
        return not _equal(actual, operand)
    a, b = _number(actual), _number(operand)
    if a is None or b is None:
        return False
    if op == "$gt":
        return a > b
    if op == "$gte":
        return a >= b
    if op == "$lt":
        return a < b
    return a <= b
