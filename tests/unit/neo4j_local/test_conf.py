from __future__ import annotations

from pathlib import Path

import pytest

from palimpsest.config import Settings
from palimpsest.errors import Unavailable
from palimpsest.neo4j_local.conf import java_binary, java_command, neo4j_conf


def test_configuration_is_loopback_only_with_the_configured_ports() -> None:
    conf = neo4j_conf(Settings(neo4j_bolt_port=17000, neo4j_http_port=17001))
    assert "server.default_listen_address=127.0.0.1" in conf
    assert "server.bolt.listen_address=:17000" in conf
    assert "server.http.listen_address=:17001" in conf
    assert "dbms.security.auth_enabled=true" in conf
    assert "dbms.usage_report.enabled=false" in conf


def test_java_is_the_configured_jdk_or_refused_clearly(tmp_path: Path) -> None:
    jdk = tmp_path / "jdk"
    (jdk / "bin").mkdir(parents=True)
    (jdk / "bin" / "java").touch()
    settings = Settings(java_home=jdk, home=tmp_path)
    assert java_binary(settings) == jdk / "bin" / "java"
    command = java_command(settings, tmp_path / "home")
    assert command[0] == str(jdk / "bin" / "java")
    assert "org.neo4j.server.Neo4jCommunity" in command
    assert command[-1] == "--console-mode"
    missing = Settings(java_home=tmp_path / "nowhere", home=tmp_path)
    if not list(Path("/usr/lib/jvm").glob("*25*/bin/java")):
        with pytest.raises(Unavailable, match="PALIMPSEST_JAVA_HOME"):
            java_binary(missing)
    else:
        assert "25" in str(java_binary(missing))
