"""Dataset records that may be malformed: skip and count them, never crash on them.

Real evaluation files hold nulls where a list belongs, missing fields, numbers given as text,
blank lines, lines that are not JSON objects or not UTF-8. Each harness reads its files with
``read_jsonl``/``read_lines`` and turns each record into what it needs with ``convert`` and the
field readers below; a record that does not fit raises ``Malformed`` and is counted under
``"<file>: <reason>"`` in a ``Skipped`` tally, which every harness reports as ``malformed`` in
its JSON. Reasons name the field and the problem, never the value.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson

from palimpsest.domain.time.timeparse import parse_time
from palimpsest.errors import PalimpsestError
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.schema.drafts import FactDraft

T = TypeVar("T")
R = TypeVar("R")

_BOM = b"\xef\xbb\xbf"
_INTEGER = re.compile(r"-?\d{1,18}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class Malformed(Exception):
    """A record that cannot be used; ``reason`` names the field and the problem."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(slots=True)
class Skipped:
    """Malformed records by ``"<file>: <reason>"``."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, where: str, reason: str) -> None:
        self.counts[f"{where}: {reason}"] += 1

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def as_dict(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))


def read_lines(path: Path, skipped: Skipped, limit: int | None = None) -> list[str]:
    """The text lines of ``path`` (the first ``limit``); blank lines and lines that are not
    UTF-8 are counted and skipped."""
    out: list[str] = []
    with path.open("rb") as fh:
        for number, raw in enumerate(fh):
            if limit is not None and len(out) >= limit:
                break
            if number == 0 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            if not raw.strip():
                skipped.add(path.name, "blank line")
                continue
            try:
                out.append(raw.decode("utf-8").rstrip("\r\n"))
            except UnicodeDecodeError:
                skipped.add(path.name, "invalid UTF-8")
    return out


def read_jsonl(path: Path, skipped: Skipped, limit: int | None = None) -> list[dict[str, Any]]:
    """The JSON objects of ``path``, one per line (of the first ``limit`` lines with text);
    anything else is counted and skipped."""
    out: list[dict[str, Any]] = []
    for line in read_lines(path, skipped, limit):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            skipped.add(path.name, "invalid JSON")
            continue
        if not isinstance(value, dict):
            skipped.add(path.name, "not a JSON object")
            continue
        out.append(value)
    return out


def convert(records: Iterable[T], where: str, skipped: Skipped, fn: Callable[[T], R]) -> list[R]:
    """``fn`` of every record, in order; records it finds malformed are counted instead."""
    out: list[R] = []
    for record in records:
        try:
            out.append(fn(record))
        except Malformed as e:
            skipped.add(where, e.reason)
    return out


# -- field readers (each raises Malformed) ----------------------------------------------


def _present(record: dict[str, Any], name: str) -> Any:
    if name not in record:
        raise Malformed(f"{name}: missing")
    value = record[name]
    if value is None:
        raise Malformed(f"{name}: null")
    return value


def text_field(record: dict[str, Any], name: str, *, blank: bool = False) -> str:
    """A string field; blank only when ``blank`` allows it."""
    value = _present(record, name)
    if not isinstance(value, str):
        raise Malformed(f"{name}: not a string")
    if not blank and not value.strip():
        raise Malformed(f"{name}: blank")
    return value


def optional_text(record: dict[str, Any], name: str) -> str | None:
    """A string field that may be missing or null (then ``None``)."""
    if record.get(name) is None:
        return None
    return text_field(record, name, blank=True)


def ident(record: dict[str, Any], name: str) -> str:
    """An id: a non-blank string without control characters, or an integer (as text)."""
    value = _present(record, name)
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise Malformed(f"{name}: not an id")
    out = str(value)
    if not out.strip() or _CONTROL.search(out):
        raise Malformed(f"{name}: not an id")
    return out


def integer(record: dict[str, Any], name: str, default: int | None = None) -> int:
    """An integer field, also written as digits in a string; ``default`` when missing/null."""
    if default is not None and record.get(name) is None:
        return default
    value = _present(record, name)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        return int(value)
    raise Malformed(f"{name}: not an integer")


def text_list(record: dict[str, Any], name: str) -> list[str]:
    """A list of strings (it may be empty)."""
    value = _present(record, name)
    if not isinstance(value, list):
        raise Malformed(f"{name}: not a list")
    if not all(isinstance(v, str) for v in value):
        raise Malformed(f"{name}: not a list of strings")
    return value


def wire_date(value: str, name: str) -> str:
    """``value`` when the API accepts it as a date or timestamp."""
    try:
        parse_time(value, name)
    except (PalimpsestError, ValueError, OverflowError) as e:
        raise Malformed(f"{name}: not a date") from e
    return value


def accepted(draft: FactDraft) -> FactDraft:
    """``draft`` when ``assertFacts`` would accept it (the same checks, no I/O)."""
    try:
        prepare([draft])
    except PalimpsestError as e:
        raise Malformed("refused by assertFacts") from e
    return draft
