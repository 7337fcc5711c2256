"""YAGO11k's pure half: the TSV of facts (rows with another column count are counted and
skipped), their validity as wire dates, load order, the probes and the exact-set score.
Nothing here touches the database; the mapping is described in ``temporal.py``."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from palimpsest.domain.names import normalise
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest_bench.records import (
    Malformed,
    Skipped,
    accepted,
    convert,
    integer,
    read_jsonl,
    read_lines,
    text_field,
    text_list,
)
from palimpsest_bench.temporal_data import wire, year_as_of

YAGO_ENTITY_TYPE = "entity"


YagoValidity = tuple[str | None, str | None]


def yago_interval(start_year: str, end_year: str, end_open: str | bool) -> YagoValidity | None:
    """Wire ``(validAt, invalidAt)`` for a YAGO row; ``None`` when the end is unknown."""
    is_open = end_open is True or str(end_open).strip().lower() == "true"
    start = f"{int(start_year):04d}" if start_year.strip() else None
    if is_open:
        return start, None
    if not end_year.strip():
        return None
    return start, f"{int(end_year) + 1:04d}"


def exact_set(predicted: Iterable[str], gold: Iterable[str]) -> bool:
    """YAGO exact match: the predicted object set is the gold set (empty gold: nothing)."""
    return {normalise(p) for p in predicted} == {normalise(g) for g in gold}


_YAGO_COLUMNS = ("subject", "relation", "object", "start_year", "end_year", "end_open")


def yago_rows(path: Path, malformed: Skipped, limit: int | None = None) -> list[dict[str, str]]:
    """The rows of a YAGO TSV by header name; a row with another column count is counted."""
    lines = read_lines(path, malformed, None if limit is None else limit + 1)
    if not lines:
        return []
    header = lines[0].split("\t")
    rows: list[dict[str, str]] = []
    for line in lines[1:]:
        cells = line.split("\t")
        if len(cells) != len(header):
            malformed.add(path.name, "wrong number of columns")
            continue
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


def _yago_draft(r: dict[str, str]) -> tuple[FactDraft, YagoValidity | None]:
    for name in _YAGO_COLUMNS:
        if name not in r:
            raise Malformed(f"{name}: missing")
    try:
        validity = yago_interval(r["start_year"], r["end_year"], r["end_open"])
    except ValueError as e:
        raise Malformed("start_year/end_year: not a year") from e
    valid_at, invalid_at = validity or (None, None)
    draft = FactDraft(
        subject=EntityRef(YAGO_ENTITY_TYPE, r["subject"]),
        predicate=r["relation"],
        object=EntityRef(YAGO_ENTITY_TYPE, r["object"]),
        object_value=None,
        valid_at=wire(valid_at, "valid_at"),
        invalid_at=wire(invalid_at, "invalid_at"),
    )
    return accepted(draft), validity


def plan_yago(
    rows: Iterable[dict[str, str]], malformed: Skipped | None = None
) -> tuple[list[FactDraft], set[tuple[str, str]]]:
    """Drafts oldest start first, and the (subject, relation) pairs with unknown validity.
    Rows that cannot become a fact are counted in ``malformed``."""
    keyed: list[tuple[tuple[int, int], FactDraft]] = []
    unknown: set[tuple[str, str]] = set()
    for draft, validity in convert(rows, "facts.tsv", malformed or Skipped(), _yago_draft):
        if validity is None:
            unknown.add((normalise(draft.subject.name), draft.predicate))
        valid_at = draft.valid_at
        keyed.append(((0, 0) if valid_at is None else (1, valid_at.year), draft))
    keyed.sort(key=lambda k: k[0])
    return [d for _, d in keyed], unknown


@dataclass(frozen=True, slots=True)
class YagoProbe:
    subject: str
    relation: str
    as_of: str  # 1 July of the probe's year
    gold_objects: list[str]


def yago_probe(rec: dict[str, Any]) -> YagoProbe:
    year = integer(rec, "as_of_year")
    if not 1 <= year <= 9999:
        raise Malformed("as_of_year: out of range")
    return YagoProbe(
        subject=text_field(rec, "subject"),
        relation=text_field(rec, "relation"),
        as_of=year_as_of(year),
        gold_objects=text_list(rec, "gold_objects"),
    )


def read_yago11k(
    data: Path, limit: int | None = None
) -> tuple[list[FactDraft], set[tuple[str, str]], list[YagoProbe], Skipped]:
    malformed = Skipped()
    drafts, unknown = plan_yago(yago_rows(data / "facts.tsv", malformed, limit), malformed)
    rows = read_jsonl(data / "asof_probes.jsonl", malformed, limit)
    return drafts, unknown, convert(rows, "asof_probes.jsonl", malformed, yago_probe), malformed
