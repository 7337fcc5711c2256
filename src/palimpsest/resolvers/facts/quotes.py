"""What a fact's source may quote where the fact lands (no I/O).

A source quotes a span of a chunk in the writer's scope. When placement moves the fact to
another scope (TENANT, or an AGENT shared by several users), everyone there reads the source,
so its text goes along only when it says nothing beyond the fact itself (the quote is found
in the fact's text or its subject's or object's name) or the runtime marked it shareable
(``shareQuote``). Otherwise the source keeps only its reference (chunk, span, origin scope),
which opens only in the source's own scope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from palimpsest.domain.names import normalise
from palimpsest.errors import InvalidArgument
from palimpsest.schema.fact_rows import FactRow


def narrow(row: FactRow, chunk_text: str) -> FactRow:
    """The row with its source span narrowed to its ``quote``, which must lie inside the span."""
    quote = row.quote or ""
    at = chunk_text.find(quote, row.source_start, row.source_end)
    if at < 0:
        raise InvalidArgument(f"facts[{row.index}].quote is not a part of the source span")
    return replace(row, source_start=at, source_end=at + len(quote))


def says_no_more(row: FactRow) -> bool:
    """The quoted text is within what the fact itself says (ignoring case and spacing)."""
    quote = normalise(row.source_text or "")
    said = (row.text, row.subject_name, row.object_name)
    return bool(quote) and any(quote in normalise(s) for s in said)


def withhold(rows: Sequence[FactRow], scope_key: str) -> list[FactRow]:
    """The rows, the quoted text dropped from sources of another scope that may not travel to
    this one."""
    return [_withheld(row, scope_key) for row in rows]


def _withheld(row: FactRow, scope_key: str) -> FactRow:
    if row.origin_key is None or row.origin_key == scope_key:
        return row
    shared = bool(row.share_quote) or says_no_more(row)
    return replace(row, source_shared=shared, source_text=row.source_text if shared else None)
