"""What a source may quote where its fact lands (``resolvers.quotes``), without a server."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.resolvers.facts import quotes
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef
from palimpsest.schema.fact_rows import FactRow

HOME, SHARED = "a" * 32, "b" * 32
CHUNK = "cnry1 the Ledger  runs on rails cnry2"


def row(quote: str | None = None, share: bool = False, **draft: Any) -> FactRow:
    [r] = prepare(
        [
            FactDraft(
                subject=EntityRef("service", "ledger"),
                predicate="runs on",
                object=None,
                object_value="rails",
                source=SourceRef("c" * 32, 0, len(CHUNK)),
                quote=quote,
                share_quote=share,
                **draft,
            )
        ]
    )
    if quote is not None:
        r = quotes.narrow(r, CHUNK)
    return replace(r, source_text=CHUNK[r.source_start : r.source_end], origin_key=HOME)


def test_a_whole_span_is_withheld_from_another_scope_and_kept_at_home() -> None:
    [shared], [home] = quotes.withhold([row()], SHARED), quotes.withhold([row()], HOME)
    assert (shared.source_text, shared.source_shared) == (None, False)
    assert (home.source_text, home.source_shared) == (CHUNK, None)


def test_a_quote_is_narrowed_and_travels_when_the_fact_says_as_much() -> None:
    r = row(quote="Ledger  runs on rails")
    assert (r.source_start, r.source_end) == (10, 31)
    [r] = quotes.withhold([r], SHARED)  # "ledger runs on rails", ignoring case and spacing
    assert (r.source_text, r.source_shared) == ("Ledger  runs on rails", True)


def test_a_marked_quote_travels_and_an_unmarked_one_does_not() -> None:
    marked, unmarked = quotes.withhold([row("rails cnry2", share=True), row("rails cnry2")], SHARED)
    assert marked.source_text == "rails cnry2"
    assert unmarked.source_text is None


def test_a_quote_outside_the_source_span_is_refused() -> None:
    r = replace(row(), quote="rails", source_end=20)
    with pytest.raises(InvalidArgument, match=r"facts\[0\]\.quote is not a part"):
        quotes.narrow(r, CHUNK)


def test_a_quote_needs_a_source() -> None:
    draft = FactDraft(EntityRef("service", "ledger"), "runs on", None, "rails", quote="rails")
    with pytest.raises(InvalidArgument, match="give source too"):
        prepare([draft])
