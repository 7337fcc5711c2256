"""What a fact's source may quote where the fact lands (no I/O).

A source quotes a span of a chunk in the writer's scope. When placement moves the fact to
another scope (TENANT, or an AGENT shared by several users), everyone there reads the source,
so its text goes along only when it says nothing beyond the fact itself (the quote is found
in the fact's text or its subject's or object's name) or the runtime marked it shareable
(``shareQuote``). Otherwise the source keeps only its reference (chunk, span, origin scope),
which opens only in the source's own scope.
"""

from __future__ import annotations

from typing import Any

from palimpsest.errors import InvalidArgument
from palimpsest.schema.names import normalise


def narrow(row: dict[str, Any], chunk_text: str) -> None:
    """Narrow the row's source span to its ``quote``, which must lie inside the span."""
    quote: str = row["quote"]
    at = chunk_text.find(quote, row["source_start"], row["source_end"])
    if at < 0:
        raise InvalidArgument(f"facts[{row['index']}].quote is not a part of the source span")
    row["source_start"], row["source_end"] = at, at + len(quote)


def says_no_more(row: dict[str, Any]) -> bool:
    """The quoted text is within what the fact itself says (ignoring case and spacing)."""
    quote = normalise(row["source_text"] or "")
    said = (row["text"], row["subject_name"], row["object_name"])
    return bool(quote) and any(quote in normalise(s) for s in said)


def withhold(rows: list[dict[str, Any]], scope_key: str) -> None:
    """Drop the quoted text of sources from another scope that may not travel to this one."""
    for row in rows:
        if row["origin_key"] is None or row["origin_key"] == scope_key:
            continue
        row["source_shared"] = bool(row["share_quote"]) or says_no_more(row)
        if not row["source_shared"]:
            row["source_text"] = None
