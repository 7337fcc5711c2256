"""The memory as MCP tools: each one calls the same resolver as its GraphQL field.

Every tool takes the caller from ``Caller`` (the verified run token and the open services) and
passes it to a resolver, which decides the scope exactly as for GraphQL. Arguments are typed, so
the SDK publishes a JSON schema for each; descriptions are written for a model choosing a tool.
Results are plain JSON objects in snake_case.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field

from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope
from palimpsest.markdown import MAX_DOCUMENT_BYTES
from palimpsest.mcp import recall_args as rc
from palimpsest.mcp.render import fact_json, hit_json, plain
from palimpsest.resolvers import document_import, memory, note_versions, ontology, sql
from palimpsest.resolvers import facts as fact_ops
from palimpsest.resolvers import harvest as harvest_ops
from palimpsest.resolvers import recall_asks as asks
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef
from palimpsest.sqlmem import Statement
from palimpsest.timeparse import parse_optional

Caller = Callable[[Context], Awaitable[tuple[Services, Principal]]]
_MIB = MAX_DOCUMENT_BYTES // (1024 * 1024)

ScopeArg = Annotated[
    Scope,
    Field(
        description="Whose memory: USER (the token's user, default), AGENT (this agent's own), "
        "TENANT (shared by the whole tenant) or GLOBAL (admins only). The owner always comes "
        "from the run token, never from arguments."
    ),
]
TimeArg = Annotated[
    str | None,
    Field(description="A date: YYYY, YYYY-MM, YYYY-MM-DD or RFC 3339 (e.g. 2024-05-01T12:00Z)."),
]
TopK = Annotated[int, Field(ge=1, le=asks.MAX_TOP_K, description="How many hits to return.")]
DedupArg = Annotated[
    float | None,
    Field(
        description="A cosine threshold: drop hits this close to a better one (each kept hit "
        "lists the ones it stood for under `duplicates`); default off."
    ),
]
SourceName = Literal["facts", "notes", "documents"]
SqlArgs = Annotated[
    list[Any] | dict[str, Any] | None,
    Field(
        description="Parameters: a list for `?` placeholders or an object for `:name`. Values "
        'are JSON scalars; a blob is {"$base64": "..."}.'
    ),
]


class Entity(BaseModel):
    type: str = Field(description="Entity type, e.g. person, service, city.")
    name: str = Field(description="Entity name as written; matching ignores case and spacing.")


class Source(BaseModel):
    chunk_id: str = Field(description="A document chunk id in the same scope.")
    start: int = Field(description="Start offset of the quoted span in the chunk's text.")
    end: int = Field(description="End offset (exclusive).")


class FactItem(BaseModel):
    subject: Entity
    predicate: str = Field(description="A short verb phrase, e.g. 'works at', 'lives in'.")
    object: Entity | None = Field(default=None, description="The object entity, or use value.")
    value: str | None = Field(default=None, description="A literal object instead of an entity.")
    text: str | None = Field(default=None, description="Default: 'subject predicate object'.")
    valid_at: TimeArg = Field(default=None, description="When it became true.")
    invalid_at: TimeArg = Field(default=None, description="When it stopped being true.")
    observed_at: TimeArg = Field(default=None, description="When it was observed.")
    natural_key: str | None = Field(default=None, description="Idempotency key (optional).")
    source: Source | None = None
    quote: str | None = Field(
        default=None,
        description="The words the fact was taken from, a part of its source (or span).",
    )
    share_quote: bool = Field(
        default=False,
        description="Let the quoted words go with the fact when placement moves it to a "
        "shared scope (default: only a reference to the span goes).",
    )

    def draft(self) -> FactDraft:
        s = self.source
        return FactDraft(
            subject=EntityRef(self.subject.type, self.subject.name),
            predicate=self.predicate,
            object=EntityRef(self.object.type, self.object.name) if self.object else None,
            object_value=self.value,
            text=self.text,
            natural_key=self.natural_key,
            observed_at=parse_optional(self.observed_at, "observed_at"),
            valid_at=parse_optional(self.valid_at, "valid_at"),
            invalid_at=parse_optional(self.invalid_at, "invalid_at"),
            source=SourceRef(s.chunk_id, s.start, s.end) if s else None,
            quote=self.quote,
            share_quote=self.share_quote,
        )


class Span(BaseModel):
    text: str = Field(description="The evicted text, as it stood in the context.")
    speaker: str | None = Field(default=None, description="Who said it, e.g. a name.")
    role: str | None = Field(default=None, description="user, assistant, tool...")
    observed_at: TimeArg = Field(default=None, description="When it was said.")
    source_id: str | None = Field(
        default=None, description="Your idempotency key for the span, unique in this run."
    )
    facts: list[FactItem] | None = Field(
        default=None, description="Facts your model drew from this span (optional)."
    )

    def draft(self) -> harvest_ops.SpanDraft:
        return harvest_ops.SpanDraft(
            text=self.text,
            speaker=self.speaker,
            role=self.role,
            observed_at=parse_optional(self.observed_at, "observed_at"),
            source_id=self.source_id,
            facts=tuple(f.draft() for f in self.facts or ()),
        )


class SqlStatement(BaseModel):
    statement: str = Field(description="One DDL/DML statement (CREATE TABLE, INSERT, UPDATE...).")
    args: SqlArgs = None


def register(server: MCPServer[Any], caller: Caller) -> None:
    """Add every tool to ``server``; ``caller`` says who calls and with which services."""

    @server.tool(
        description="Remember a value under a key (replaces what was there). The value is any "
        "JSON; it is embedded so `recall` finds it by meaning. Use keys like 'prefs/editor'."
    )
    async def remember(
        ctx: Context,
        key: Annotated[str, Field(description="The key, 1-512 bytes.")],
        value: Annotated[Any, Field(description="Any JSON value except null.")],
        scope: ScopeArg = Scope.USER,
        ttl_seconds: Annotated[
            int | None, Field(ge=0, description="Forget after this many seconds (0/none: never).")
        ] = None,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        if value is None:  # GraphQL's `value: JSON!` refuses it by type
            raise InvalidArgument("value must not be null; forget a key by remembering another")
        entry = await memory.set_value(svc, who, scope, key, value, ttl_seconds, True, None)
        return {"entry": plain(entry)}

    @server.tool(
        description="Read the value remembered under a key (null when there is none). With "
        "known_at, read what the key held at that time: the version recorded then, even if "
        "it was changed or deleted since; as_of reads a dated value valid at that time."
    )
    async def memory_get(
        ctx: Context,
        key: Annotated[str, Field(description="The key, 1-512 bytes.")],
        scope: ScopeArg = Scope.USER,
        as_of: TimeArg = None,
        known_at: TimeArg = None,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        entry = await memory.get(
            svc,
            who,
            scope,
            key,
            parse_optional(as_of, "as_of"),
            parse_optional(known_at, "known_at"),
        )
        return {"entry": plain(entry) if entry else None}

    @server.tool(
        description="Every version of a key, newest first: the current value, the values it "
        "replaced and the deletions (deleted: true, no value), each with when it was written "
        "(created_at) and replaced (expired_at). Page with the returned cursor."
    )
    async def memory_history(
        ctx: Context,
        key: Annotated[str, Field(description="The key, 1-512 bytes.")],
        scope: ScopeArg = Scope.USER,
        limit: Annotated[int, Field(ge=1, le=note_versions.MAX_HISTORY_LIMIT)] = 100,
        after: Annotated[str | None, Field(description="The cursor of the previous page.")] = None,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        found = await note_versions.history(svc, who, scope, key, limit, after)
        return {"versions": [plain(v) for v in found.items], "cursor": found.cursor}

    @server.tool(
        description="Recall what is remembered about a question: facts and remembered values, "
        "ranked by meaning and words together. Each hit says its kind, scope and score."
    )
    async def recall(
        ctx: Context,
        query: Annotated[str, Field(description="What to recall, in plain words.")],
        scope: ScopeArg = Scope.USER,
        top_k: TopK = asks.DEFAULT_TOP_K,
        also_scopes: Annotated[
            list[Scope] | None, Field(description="More scopes to merge into the results.")
        ] = None,
        as_of: TimeArg = None,
        dedup: DedupArg = None,
        min_score: rc.MinScore = None,
        recency_half_life: rc.HalfLife = None,
        weights: rc.Weights = None,
        max_per_document: rc.PerDocument = None,
    ) -> dict[str, Any]:
        more = asks.Controls.of(min_score, recency_half_life, weights, max_per_document)
        return await _recall(
            ctx, caller, query, scope, top_k, None, also_scopes, as_of, True, dedup, more
        )

    @server.tool(
        description="Search everything in a scope (facts, remembered values and imported "
        "document chunks) with the same ranking as recall; `sources` narrows the kinds."
    )
    async def search(
        ctx: Context,
        query: Annotated[str, Field(description="What to look for, in plain words.")],
        scope: ScopeArg = Scope.USER,
        top_k: TopK = asks.DEFAULT_TOP_K,
        sources: Annotated[
            list[SourceName] | None, Field(description="Kinds of rows; default all three.")
        ] = None,
        also_scopes: Annotated[list[Scope] | None, Field(description="More scopes.")] = None,
        as_of: TimeArg = None,
        dedup: DedupArg = None,
        min_score: rc.MinScore = None,
        recency_half_life: rc.HalfLife = None,
        weights: rc.Weights = None,
        max_per_document: rc.PerDocument = None,
    ) -> dict[str, Any]:
        more = asks.Controls.of(min_score, recency_half_life, weights, max_per_document)
        return await _recall(
            ctx, caller, query, scope, top_k, sources, also_scopes, as_of, False, dedup, more
        )

    @server.tool(
        description="Import a Markdown document: it is split into headings, paragraphs, list "
        "items, code and tables, each searchable. Returns the document id and its chunk count."
    )
    async def import_document(
        ctx: Context,
        markdown: Annotated[
            str, Field(description=f"The document's Markdown text (<= {_MIB} MiB).")
        ],
        scope: ScopeArg = Scope.USER,
        title: Annotated[str | None, Field(description="Default: the first heading.")] = None,
        path: Annotated[
            str | None, Field(description="A path to list it by, e.g. /notes/a.md")
        ] = None,
        observed_at: TimeArg = None,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        observed = parse_optional(observed_at, "observed_at")
        doc = await document_import.import_document(
            svc, who, scope, markdown, title, path, observed
        )
        summary = doc.summary
        return {
            "id": summary.id,
            "title": summary.title,
            "path": summary.path,
            "chunk_count": summary.chunk_count,
            "scope": scope.value,
        }

    @server.tool(
        description="State facts (subject, predicate, object or value, optional validity "
        "times), idempotently. With place=true the tenant ontology may file a fact under "
        "another scope; each result says where it went and why."
    )
    async def assert_facts(
        ctx: Context,
        facts: Annotated[list[FactItem], Field(description="1-200 facts.")],
        scope: ScopeArg = Scope.USER,
        place: Annotated[bool, Field(description="Let the tenant ontology place facts.")] = True,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        placed = await ontology.assert_placed(svc, who, scope, [f.draft() for f in facts], place)
        return {
            "results": [
                {
                    "fact": fact_json(p.asserted.fact),
                    "created": p.asserted.created,
                    "placement": plain(p.placement) if p.placement else None,
                    "closed": [
                        {
                            "fact": fact_json(c.fact),
                            "invalid_at": c.invalid_at.isoformat(),
                            "reason": c.reason.value,
                            "by_id": c.by_id,
                            "same_start": c.same_start,
                        }
                        for c in p.asserted.closed
                    ],
                    "merged": p.asserted.merged,
                }
                for p in placed
            ]
        }

    @server.tool(
        description="List facts, optionally about one subject or predicate, as they stood at "
        "a time (as_of, default now) and as they were known then (known_at)."
    )
    async def facts(
        ctx: Context,
        scope: ScopeArg = Scope.USER,
        subject: Annotated[Entity | None, Field(description="Only facts about this.")] = None,
        predicate: str | None = None,
        as_of: TimeArg = None,
        known_at: TimeArg = None,
        include_retired: bool = False,
        limit: Annotated[int, Field(ge=1, le=1000)] = 100,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        view = fact_ops.time_view(
            svc,
            parse_optional(as_of, "as_of"),
            parse_optional(known_at, "known_at"),
            include_retired,
        )
        ref = EntityRef(subject.type, subject.name) if subject else None
        found = await fact_ops.list_facts(svc, who, scope, view, ref, predicate, limit)
        return {"facts": [fact_json(f) for f in found.items], "has_more": found.has_more}

    @server.tool(
        description="Bank the spans your context distillation evicted, so nothing is lost: "
        "they are stored at once in your user's memory and consolidated into recallable "
        "memory by a worker. Re-sending a span with the same source_id is a no-op."
    )
    async def harvest(
        ctx: Context,
        spans: Annotated[list[Span], Field(description="1-1000 spans, at most 1 MiB in all.")],
        compaction_generation: Annotated[
            int, Field(ge=0, description="Which distillation of this run evicted them.")
        ],
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        drafts = [s.draft() for s in spans]
        receipt = await harvest_ops.harvest(svc, who, drafts, compaction_generation)
        return {"receipt": plain(receipt)}

    @server.tool(
        description="Run one read-only SQL statement (SELECT or WITH ... SELECT) in the "
        "scope's own SQLite database. Rows are capped; `truncated` says when more existed."
    )
    async def sql_query(
        ctx: Context,
        statement: Annotated[str, Field(description="One SELECT statement.")],
        args: SqlArgs = None,
        scope: ScopeArg = Scope.USER,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        r = await sql.query(svc, who, scope, statement, args)
        return {"columns": r.columns, "rows": r.rows, "truncated": r.truncated}

    @server.tool(
        description="Create tables and write rows in the scope's own SQLite database: 1-100 "
        "statements run as one transaction, all or none."
    )
    async def sql_exec(
        ctx: Context,
        statements: Annotated[list[SqlStatement], Field(description="The batch, in order.")],
        scope: ScopeArg = Scope.USER,
    ) -> dict[str, Any]:
        svc, who = await caller(ctx)
        batch = [Statement(s.statement, s.args) for s in statements]
        results = await sql.execute(svc, who, scope, batch)
        return {"results": [plain(r) for r in results]}


async def _recall(
    ctx: Context,
    caller: Caller,
    query: str,
    scope: Scope,
    top_k: int,
    sources: list[SourceName] | None,
    also_scopes: list[Scope] | None,
    as_of: str | None,
    recall_default: bool,
    dedup: float | None = None,
    controls: asks.Controls | None = None,
) -> dict[str, Any]:
    svc, who = await caller(ctx)
    ask = asks.Ask(
        query=query,
        scope=scope,
        top_k=top_k,
        sources=sources,
        when=asks.When(as_of=parse_optional(as_of, "as_of")),
        also_scopes=also_scopes or (),
        dedup=dedup,
        controls=controls or asks.Controls(),
    )
    result = await (asks.recall if recall_default else asks.search)(svc, who, ask)
    return {
        "hits": [hit_json(h) for h in result.hits],
        "scopes": [s.value for s in result.scopes],
        "controls": plain(result.controls),  # what the per-call controls did (null: none given)
    }
