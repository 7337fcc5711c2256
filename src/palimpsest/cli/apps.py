"""The command groups and the two output helpers every subcommand module shares."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from palimpsest.cli import coercion
from palimpsest.cli.looks import print_json as print_json

if TYPE_CHECKING:
    from palimpsest.config import Settings

# Plain values (strings, integers, choices) are coerced without typer's pydantic adapters.
coercion.install()

app = typer.Typer(
    no_args_is_help=True,
    add_completion=False,
    help="Palimpsest: long-term memory for AI agents (GraphQL and MCP over Neo4j).",
)
neo4j_app = typer.Typer(no_args_is_help=True, help="The managed local Neo4j server.")
postgres_app = typer.Typer(
    no_args_is_help=True, help="The managed local PostgreSQL (for PALIMPSEST_SQL_BACKEND=postgres)."
)
graphiql_app = typer.Typer(no_args_is_help=True, help="The offline GraphiQL page's assets.")
token_app = typer.Typer(no_args_is_help=True, help="Run tokens for development.")
app.add_typer(neo4j_app, name="neo4j")
app.add_typer(postgres_app, name="postgres")
app.add_typer(graphiql_app, name="graphiql")
app.add_typer(token_app, name="token")


def err(message: str) -> None:
    """Progress and notices go to stderr, so stdout stays machine-readable."""
    typer.echo(message, err=True)


def load_settings() -> Settings:
    """The settings, imported on first use: pydantic-settings is most of a quick look's
    start-up, and ``--help`` or a command that never reads them should not pay for it."""
    from palimpsest.config import Settings

    return Settings()


def _version(value: bool) -> None:
    if value:
        from palimpsest import __version__

        typer.echo(f"palimpsest {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Long-term memory server for AI agents: GraphQL and MCP over Neo4j, scoped by run tokens."""
