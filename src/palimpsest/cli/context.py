"""``palimpsest context QUERY``: the block a runtime would get for its next turn, a quick look
over the typed client on the running API as the run token, like ``palimpsest memory``
(``cli/people.py``)."""

from __future__ import annotations

from typing import Annotated

import typer

from palimpsest.cli.apps import app, err, print_json
from palimpsest.cli.people import ScopeOpt, TimeOpt
from palimpsest.cli.quick import client as _client
from palimpsest.domain.notes.values import plain
from palimpsest.identity import Scope


@app.command("context")
def context(
    query: str,
    scope: ScopeOpt = Scope.USER,
    budget: Annotated[
        int | None, typer.Option(help="The most tokens the block may hold (server default).")
    ] = None,
    also: Annotated[
        list[Scope] | None, typer.Option(help="Another scope to read (repeat for more).")
    ] = None,
    as_of: TimeOpt = None,
    known_at: TimeOpt = None,
    min_score: Annotated[
        float | None,
        typer.Option(help="Leave out hits whose cosine is below this, -1 to 1 (server default)."),
    ] = None,
    json: Annotated[bool, typer.Option("--json", help="Print the block and its items.")] = False,
) -> None:
    """Print the packed memory block for QUERY: pinned notes, facts about the entities it
    names, then recall hits, each line citing its id; tokens and truncation on stderr."""
    with _client() as client:
        block = client.context(
            scope,
            query,
            budget_tokens=budget,
            also_scopes=also,
            as_of=as_of,
            known_at=known_at,
            min_score=min_score,
        )
    if json:  # the MCP tool's shape, as before: kind and source in lower case
        items = [
            {**plain(i), "kind": i.kind.value.lower(), "source": i.source.value.lower()}
            for i in block.items
        ]
        print_json({**plain(block), "items": items})
    elif block.text:
        typer.echo(block.text)
    cut = ", truncated" if block.truncated else ""
    err(f"{block.tokens} tokens in {len(block.items)} pieces{cut}")
