"""Running things: the API server, the managed Neo4j, GraphiQL's assets, run tokens."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from palimpsest.cli.apps import (
    app,
    err,
    graphiql_app,
    load_settings,
    neo4j_app,
    postgres_app,
    token_app,
)
from palimpsest.identity import Role, Scope
from palimpsest.identity.lifetimes import DEFAULT_TTL_SECONDS, MAX_MINTED_TTL_SECONDS


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address.")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port.")] = None,
) -> None:
    """Start the API (and the managed Neo4j when it is the configured default)."""
    from palimpsest.cli.serving import serve_api

    settings = load_settings()
    overrides = {k: v for k, v in {"host": host, "port": port}.items() if v is not None}
    serve_api(settings.replace(**overrides))


@graphiql_app.command("install")
def graphiql_install() -> None:
    """Fetch GraphiQL's pinned npm tarballs (integrity-checked) into PALIMPSEST_HOME."""
    from palimpsest.local.graphiql import install_assets

    settings = load_settings()
    install_assets(settings.graphiql_dir, settings.local.npm_registry_url)
    err(f"GraphiQL assets in {settings.graphiql_dir}")


@neo4j_app.command("install")
def neo4j_install() -> None:
    """Fetch the locked Neo4j jars (sha256-checked), write the configuration, set a password."""
    from palimpsest.local import neo4j as neo4j_local

    neo4j_local.install(load_settings(), say=err)


@neo4j_app.command("lock")
def neo4j_lock(
    output: Annotated[
        Path | None, typer.Option(help="Where to write the lock (default: the packaged one).")
    ] = None,
) -> None:
    """Maintainers: resolve pom.xml with Maven and rewrite the jar lock (coordinates, sha256)."""
    from palimpsest.local.neo4j import jars

    settings = load_settings()
    jars.make_lock(
        settings.neo4j.version,
        settings.neo4j.browser_version,
        output or jars.lock_path(),
        say=err,
    )


@neo4j_app.command("extension")
def neo4j_extension(
    output: Annotated[
        Path | None,
        typer.Option(help="Also copy the jar into this folder (the Docker image does)."),
    ] = None,
) -> None:
    """Build Palimpsest's Neo4j extension (the palimpsest.* procedures) with ECJ on the Java
    that runs Neo4j, against the locked Neo4j jars; `neo4j install` does it too."""
    from palimpsest.local.neo4j.manager import build_extension

    build_extension(load_settings(), say=err, output=output)


@neo4j_app.command("start")
def neo4j_start() -> None:
    """Start the managed Neo4j in the background and wait until Bolt answers."""
    from palimpsest.local import neo4j as neo4j_local

    s = neo4j_local.start(load_settings(), say=err)
    err(f"bolt {s.bolt_uri}   browser {s.browser_url}")


@neo4j_app.command("stop")
def neo4j_stop() -> None:
    """Stop the managed Neo4j cleanly."""
    from palimpsest.local import neo4j as neo4j_local

    neo4j_local.stop(load_settings(), say=err)


@neo4j_app.command("status")
def neo4j_status() -> None:
    """Say whether the managed Neo4j is installed and running; exit 1 when it is not running."""
    from palimpsest.local import neo4j as neo4j_local

    s = neo4j_local.status(load_settings())
    typer.echo(
        f"installed={s.installed} running={s.running} pid={s.pid} "
        f"bolt={s.bolt_uri} browser={s.browser_url} home={s.home}"
    )
    if not s.running:
        raise typer.Exit(1)


@postgres_app.command("start")
def postgres_start() -> None:
    """Start the managed PostgreSQL (initdb on first use) and wait until it accepts logins."""
    from palimpsest.local import postgres as postgres_local

    s = postgres_local.start(load_settings(), say=err)
    err(f"postgres {s.dsn}")


@postgres_app.command("stop")
def postgres_stop() -> None:
    """Stop the managed PostgreSQL (fast shutdown: open transactions roll back)."""
    from palimpsest.local import postgres as postgres_local

    postgres_local.stop(load_settings(), say=err)


@postgres_app.command("status")
def postgres_status() -> None:
    """Say whether the managed PostgreSQL is initialised and running; exit 1 when not running."""
    from palimpsest.local import postgres as postgres_local

    s = postgres_local.status(load_settings())
    typer.echo(f"installed={s.installed} running={s.running} pid={s.pid} {s.dsn} home={s.home}")
    if not s.running:
        raise typer.Exit(1)


@token_app.command("mint")
def token_mint(
    tenant: Annotated[str, typer.Option(help="Tenant id.")],
    user: Annotated[str | None, typer.Option(help="User id.")] = None,
    agent: Annotated[str | None, typer.Option(help="Agent name.")] = None,
    admin: Annotated[bool, typer.Option(help="Grant the tenant admin role.")] = False,
    operator: Annotated[
        bool, typer.Option(help="Grant the platform operator role (the only one with GLOBAL).")
    ] = False,
    consolidator: Annotated[bool, typer.Option(help="Grant the consolidator role.")] = False,
    isolated: Annotated[bool, typer.Option(help="Mark the member isolated.")] = False,
    memory_scope: Annotated[
        list[Scope] | None, typer.Option(help="Memory grant (repeat); unset means defaults.")
    ] = None,
    sql_scope: Annotated[
        list[Scope] | None, typer.Option(help="SQL grant (repeat); unset means defaults.")
    ] = None,
    ttl: Annotated[
        int,
        typer.Option(
            min=1,
            max=MAX_MINTED_TTL_SECONDS,
            help="Lifetime in seconds (at most 90 days: a token cannot be revoked alone).",
        ),
    ] = DEFAULT_TTL_SECONDS,
) -> None:
    """Print a signed run token (only the token) on stdout."""
    flags = ((Role.ADMIN, admin), (Role.OPERATOR, operator), (Role.CONSOLIDATOR, consolidator))
    roles = {r for r, on in flags if on}
    from palimpsest.identity.tokens import load_keys, mint  # jwt: only when minting

    token = mint(
        load_keys(load_settings()),
        tenant=tenant,
        user=user,
        agent=agent,
        roles=roles,
        memory_scopes=memory_scope,
        sql_scopes=sql_scope,
        isolated=isolated,
        ttl_seconds=ttl,
    )
    sys.stdout.write(token + "\n")


@app.command("mcp")
def mcp_stdio() -> None:
    """Serve MCP on stdin/stdout for an agent runtime, acting as PALIMPSEST_RUN_TOKEN."""
    from palimpsest.mcp import run_stdio

    run_stdio(load_settings(), say=err)
