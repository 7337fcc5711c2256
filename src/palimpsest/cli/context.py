"""``palimpsest context QUERY``: the block a runtime would get for its next turn, acting as
the run token like ``palimpsest memory`` (``cli/people.py``), over ``resolvers/context.py``."""

from __future__ import annotations

from typing import Annotated

import typer

from palimpsest.cli.apps import app, err, print_json
from palimpsest.cli.people import ScopeOpt, TimeOpt, _run
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
    json: Annotated[bool, typer.Option("--json", help="Print the block and its items.")] = False,
) -> None:
    """Print the packed memory block for QUERY: pinned notes, facts about the entities it
    names, then recall hits, each line citing its id; tokens and truncation on stderr."""
    from palimpsest.mcp.context_tools import block_json
    from palimpsest.resolvers import context as ops
    from palimpsest.timeparse import parse_optional

    valid, known = parse_optional(as_of, "as_of"), parse_optional(known_at, "known_at")
    tokens = ops.DEFAULT_BUDGET_TOKENS if budget is None else budget
    block = _run(
        lambda svc, who: ops.context(svc, who, scope, query, tokens, also or (), valid, known)
    )
    if json:
        print_json(block_json(block))
    elif block.text:
        typer.echo(block.text)
    cut = ", truncated" if block.truncated else ""
    err(f"{block.tokens} tokens in {len(block.items)} pieces{cut}")
