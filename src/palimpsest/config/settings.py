"""Settings, read once from the environment (prefix ``PALIMPSEST_``) and an optional ``.env``.

Nothing else in the code reads environment variables: the CLI and ``create_app`` build one
``Settings`` and pass it down. The settings are grouped in frozen sections
(``settings.recall.pool_factor``); every variable keeps its flat name
(``PALIMPSEST_RECALL_POOL_FACTOR``), and ``Settings(recall_pool_factor=3)`` and
``settings.replace(recall_pool_factor=3)`` take the flat names too.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, SecretStr, model_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from palimpsest.config.sections import (
    AdmissionSettings,
    AuthSettings,
    EmbeddingSettings,
    LimitSettings,
    LocalSettings,
    ModelSettings,
    Neo4jSettings,
    QueueSettings,
    RecallSettings,
    Section,
    SqlSettings,
)
from palimpsest.errors import Unavailable

__all__ = ["Settings", "flat_names", "variable_of"]

_PREFIX = "PALIMPSEST_"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=_PREFIX, env_file=".env", extra="ignore", frozen=True
    )

    # Where state lives that must never enter the git tree: the dev token secret, the
    # managed Neo4j (jars, data, password), the embedding model folder, SQL Memory files.
    home: Path = Field(default_factory=lambda: Path.home() / ".palimpsest")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=1, le=65535)
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    # The run token `palimpsest mcp` (stdio) and the quick looks act as; HTTP callers send
    # their own.
    run_token: SecretStr | None = None
    # The running API the quick looks (`palimpsest memory ...`) talk to; unset: host and port.
    server_url: str | None = None
    # Prometheus metrics show every tenant's traffic, so they get their own listener,
    # off unless a port is set (loopback by default).
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    metrics_host: str = "127.0.0.1"

    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    local: LocalSettings = Field(default_factory=LocalSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    recall: RecallSettings = Field(default_factory=RecallSettings)
    limits: LimitSettings = Field(default_factory=LimitSettings)
    admission: AdmissionSettings = Field(default_factory=AdmissionSettings)
    sql: SqlSettings = Field(default_factory=SqlSettings)
    queue: QueueSettings = Field(default_factory=QueueSettings)
    model: ModelSettings = Field(default_factory=ModelSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (
            init_settings,
            _FlatVariables(settings_cls, env_settings),
            _FlatVariables(settings_cls, dotenv_settings),
            file_secret_settings,
        )

    @model_validator(mode="before")
    @classmethod
    def _sections_from_flat_names(cls, data: Any) -> Any:
        return _route(data) if isinstance(data, Mapping) else data

    @model_validator(mode="after")
    def _check_secrets(self) -> Settings:
        for name, secret in (
            ("TOKEN_SECRET", self.auth.secret),
            ("SERVER_SECRET", self.auth.server_secret),
        ):
            if secret is not None and len(secret.get_secret_value()) < 32:
                raise ValueError(f"PALIMPSEST_{name} must be at least 32 bytes")
        model = self.model
        if "model" in self.queue.extractor_names:
            # Refused at start: a worker would otherwise fail every batch's extraction.
            for setting, value in (("URL", model.url), ("NAME", model.name)):
                if not (value or "").strip():
                    raise ValueError(
                        f"PALIMPSEST_MODEL_{setting} must be set when PALIMPSEST_EXTRACTORS "
                        "names model"
                    )
            if not (model.url or "").startswith(("http://", "https://")):
                raise ValueError("PALIMPSEST_MODEL_URL must be an http:// or https:// URL")
        if model.judges and not (model.url or "").startswith(("http://", "https://")):
            raise ValueError("PALIMPSEST_MODEL_URL must be an http:// or https:// URL")
        return self

    def replace(self, **changes: Any) -> Settings:
        """A copy with ``changes`` (flat names or sections), validated as a new one would be."""
        unknown = [k for k in changes if k not in type(self).model_fields and k not in _routes()]
        if unknown:
            raise TypeError(f"unknown settings: {', '.join(sorted(unknown))}")
        current = {name: getattr(self, name) for name in type(self).model_fields}
        return type(self).model_validate({**current, **changes})

    def value(self, name: str) -> Any:
        """A setting by its flat name (``value("rrf_k")`` is ``recall.rrf_k``)."""
        route = _routes().get(name)
        if route is None:
            if name not in type(self).model_fields or name in _sections():
                raise KeyError(name)
            return getattr(self, name)
        return getattr(getattr(self, route[0]), route[1])

    def model_copy(
        self, *, update: Mapping[str, Any] | None = None, deep: bool = False
    ) -> Settings:
        """``replace``'s copy when there are changes: pydantic's would skip validation and put
        a flat name beside its section, where nothing reads it."""
        if update:
            return self.replace(**update)
        return super().model_copy(deep=deep)

    if not TYPE_CHECKING:
        # The flat names, for one release (CHANGELOG): ``settings.recall_pool_factor``.
        def __getattr__(self, name: str) -> Any:
            route = _routes().get(name)
            if route is None:
                return super().__getattr__(name)
            warnings.warn(
                f"Settings.{name} is settings.{route[0]}.{route[1]}",
                DeprecationWarning,
                stacklevel=2,
            )
            return self.value(name)

    @property
    def bolt_uri(self) -> str:
        return self.neo4j.uri or f"bolt://127.0.0.1:{self.neo4j.bolt_port}"

    @property
    def api_url(self) -> str:
        """Where the quick looks reach the API: ``server_url``, else the listen address."""
        if self.server_url:
            return self.server_url
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host  # noqa: S104
        return f"http://{host}:{self.port}"

    @property
    def neo4j_home(self) -> Path:
        return self.home / "neo4j" / self.neo4j.version

    @property
    def model_dir(self) -> Path:
        return self.home / "models"

    @property
    def graphiql_dir(self) -> Path:
        return self.home / "graphiql"

    @property
    def postgres_home(self) -> Path:
        return self.home / "postgres"

    @property
    def dev_secret_file(self) -> Path:
        return self.home / "dev-token-secret"

    # Credentials and connection info: here, not in ``local/``, because the runtime and SQL
    # Memory need them too and must not import the managed servers (the layers,
    # tools/house.py). ``local/`` writes the generated passwords these read.
    @property
    def neo4j_password_file(self) -> Path:
        """The managed Neo4j's generated password (``palimpsest neo4j install`` writes it)."""
        return self.neo4j_home / "password"

    @property
    def postgres_password_file(self) -> Path:
        """The managed PostgreSQL's generated password (``palimpsest postgres start``)."""
        return self.postgres_home / "password"

    def neo4j_credentials(self) -> tuple[str, str]:
        """The Bolt user and password: configured, or the managed server's generated one."""
        if self.neo4j.password is not None:
            return self.neo4j.user, self.neo4j.password.get_secret_value()
        path = self.neo4j_password_file
        if not path.exists():
            raise Unavailable(
                f"no Neo4j password: set PALIMPSEST_NEO4J_PASSWORD or run `palimpsest neo4j "
                f"install` (expected {path})"
            )
        return "neo4j", path.read_text().strip()

    def postgres_credentials(self) -> tuple[str, str]:
        """The admin role and its password: configured, or the managed server's generated one."""
        sql = self.sql
        if sql.postgres_password is not None:
            return sql.postgres_user, sql.postgres_password.get_secret_value()
        path = self.postgres_password_file
        if not path.exists():
            raise Unavailable(
                "no PostgreSQL password: set PALIMPSEST_POSTGRES_PASSWORD or run "
                f"`palimpsest postgres start` (expected {path})"
            )
        return sql.postgres_user, path.read_text().strip()

    def postgres_conninfo(self, dbname: str | None = None) -> dict[str, object]:
        """Connection parameters of the admin role (``psycopg.connect(**conninfo)``)."""
        user, password = self.postgres_credentials()
        return {
            "host": self.sql.postgres_host,
            "port": self.sql.postgres_port,
            "dbname": dbname or self.sql.postgres_database,
            "user": user,
            "password": password,
            "connect_timeout": 5,
        }


def _sections() -> dict[str, type[Section]]:
    sections: dict[str, type[Section]] = {}
    for name, info in Settings.model_fields.items():
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, Section):
            sections[name] = kind
    return sections


def _alias(name: str, info: FieldInfo) -> str:
    return info.validation_alias if isinstance(info.validation_alias, str) else info.alias or name


@cache
def _routes() -> dict[str, tuple[str, str]]:
    """Each section field's flat name -> (section, field)."""
    return {
        _alias(field, info): (section, field)
        for section, kind in _sections().items()
        for field, info in kind.model_fields.items()
    }


def flat_names() -> list[str]:
    """Every setting's flat name, as its variable is spelt after ``PALIMPSEST_``."""
    top = [name for name in Settings.model_fields if name not in _sections()]
    return sorted([*top, *_routes()])


def variable_of(loc: tuple[str | int, ...]) -> str:
    """The variable a validation error's location names (``PALIMPSEST_MAX_TOKEN_BYTES`` for
    ``("auth", "max_bytes")``); empty for an error of the whole."""
    if not loc:
        return ""
    kind = _sections().get(str(loc[0]))
    if kind is not None and len(loc) > 1 and str(loc[1]) in kind.model_fields:
        name = _alias(str(loc[1]), kind.model_fields[str(loc[1])])
    else:
        name = "_".join(str(part) for part in loc)
    return f"{_PREFIX}{name.upper()}"


def _route(data: Mapping[str, Any]) -> dict[str, Any]:
    """Flat names moved into their sections (a section given whole is kept, then overlaid)."""
    routes = _routes()
    out: dict[str, Any] = {}
    nested: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        route = routes.get(key)
        if route is None:
            out[key] = value
        else:
            nested.setdefault(route[0], {})[route[1]] = value
    for section, values in nested.items():
        base = out.get(section)
        if isinstance(base, Section):
            base = dict(base)
        out[section] = {**(base or {}), **values}
    return out


class _FlatVariables(PydanticBaseSettingsSource):
    """The environment (or ``.env``) read by flat names only: each setting's variable, moved
    under its section. A variable named like a section (``PALIMPSEST_MODEL``) is no setting
    and is ignored, as any unknown one, where the stock source would parse it as the
    section's JSON. Every setting is a scalar, so none needs the stock source's JSON."""

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource):
        super().__init__(settings_cls)
        self._inner = inner

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return self._inner.get_field_value(field, field_name)

    def __call__(self) -> dict[str, Any]:
        inner = self._inner
        if not isinstance(inner, EnvSettingsSource):
            return _route(dict(inner()))
        variables = inner.env_vars  # DotEnvSettingsSource is one too: the file's variables
        data: dict[str, Any] = {}
        for flat in flat_names():
            value = variables.get(f"{_PREFIX}{flat}".lower())
            if value is not None:
                data[flat] = value
        return _route(data)
