"""``palimpsest document``: a document's revisions at a shell (history, one revision, a diff),
acting as the run token like ``palimpsest memory`` (``cli/people.py``)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from palimpsest.cli.apps import app, err, print_json
from palimpsest.cli.people import ScopeOpt, TimeOpt, _run
from palimpsest.identity import Scope

document_app = typer.Typer(no_args_is_help=True, help="A document's revisions.")
app.add_typer(document_app, name="document")


@document_app.command("history")
def document_history(
    id: str,
    scope: ScopeOpt = Scope.USER,
    limit: Annotated[int, typer.Option(min=1)] = 100,
    after: Annotated[str | None, typer.Option(help="The cursor a page printed.")] = None,
) -> None:
    """Print a document's revisions as JSON, newest first (a delete: deleted true), and the
    cursor of the next page on stderr when there is one."""
    from palimpsest.mcp.render import plain
    from palimpsest.resolvers import documents

    found = _run(lambda svc, who: documents.history(svc, who, scope, id, limit, after))
    if found.cursor:
        err(f"more: --after {found.cursor}")
    print_json([plain(r) for r in found.items])


@document_app.command("show")
def document_show(
    id: str,
    scope: ScopeOpt = Scope.USER,
    revision: Annotated[int | None, typer.Option(help="That revision (from 1).")] = None,
    known_at: TimeOpt = None,
) -> None:
    """Print a document's Markdown exactly (with --revision or --known-at: as it was then);
    exit 1 when there is none."""
    from palimpsest.domain.time.timeparse import parse_optional
    from palimpsest.resolvers import documents

    known = parse_optional(known_at, "known_at")
    doc = _run(lambda svc, who: documents.get_document(svc, who, scope, id, revision, known))
    if doc is None:
        err(f"no document {id!r} in {scope.value} then")
        raise typer.Exit(1)
    sys.stdout.write(documents.export(doc))


@document_app.command("diff")
def document_diff(
    id: str, from_revision: int, to_revision: int, scope: ScopeOpt = Scope.USER
) -> None:
    """Print a unified diff of two revisions' Markdown."""
    from palimpsest.resolvers import documents

    found = _run(lambda svc, who: documents.diff(svc, who, scope, id, from_revision, to_revision))
    sys.stdout.write(found)
