"""Warm before ready: start-up does once what the first requests would otherwise pay for.

A freshly started server answers its first minutes of traffic far slower than later: every
statement is planned on its first call, the embedding model and Python's paths run for the
first time, the SQL workers start, index pages are read. Under a steady arrival rate that
first slowness turns into refusals. So after start-up, before ``/readyz`` says ready, the
server runs these steps in order (``left`` names the ones still to run):

- ``sql``: SQL Memory's workers started (SQLite) or a pooled connection opened (PostgreSQL);
- ``model``: the embedding model run once per slot (both models during a migration), as a
  question and as a stored row;
- ``documents``: the client's GraphQL documents (the doors' common calls) parsed, checked
  and validated against the schema;
- ``reads``: the common reads (recall, search, a note, facts) run through their resolvers on
  the scopes of a principal of its own: a random tenant no token names, whose scopes hold
  nothing, so no tenant's row is read and nothing is written; their statements are planned
  with the parameter types real calls send and their indexes are searched;
- ``writes``: the common writes (a note with its vector, a fact) rehearsed through their
  resolvers in that same principal's scope, each in a transaction that is rolled back
  (``executor.Rehearsal``): run for real, kept nowhere;
- ``statements``: every named statement planned once (``EXPLAIN``), so one the database
  cannot plan fails here, not on a caller's request;
- ``drive``: for ``warmup_drive_seconds``, a few lanes (each a principal of its own, as above)
  repeat the common writes and reads, each round in one transaction that is rolled back
  (``executor.OneTransaction``): the reads find the round's rows, so the database's compiled
  code and the API's paths are exercised as traffic would, not only planned. A restarted
  database compiles its hot paths only after many runs of them; one run each leaves it cold.
  A drive that fails logs a warning and the server serves anyway: it only warms.

The whole is bounded by ``warmup_seconds``: past it the server serves anyway, with a warning
naming what was left (a slow start-up must not keep a replica out of service forever). A step
that fails keeps the server not ready, with one error line naming the step, the statement or
document, and a code. ``/healthz`` never waits for any of it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import anyio.to_thread
from graphql import GraphQLSchema

from palimpsest.client import operations
from palimpsest.client.wire import Operation
from palimpsest.cypher import recall_one, recall_procedure
from palimpsest.cypher.driver.errors import database_code
from palimpsest.cypher.driver.executor import (
    Database,
    Neo4jExecutor,
    OneTransaction,
    RawRun,
    Rehearsal,
    Statement,
)
from palimpsest.cypher.plans import explained, named_statements
from palimpsest.embedding.models import ActiveEmbedder, embed_queries
from palimpsest.errors import ErrorCode, PalimpsestError
from palimpsest.graphql.limits import EdgeLimits, prepare
from palimpsest.identity import Scope
from palimpsest.identity.principal import Principal
from palimpsest.resolvers import documents as document_import
from palimpsest.resolvers import facts, notes, recall
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft

log = logging.getLogger("palimpsest.warmup")

State = Literal["warming", "warm", "failed"]
Step = Callable[[Services], Awaitable[None]]
TIMEOUT = "TIMEOUT"
# What the reads ask: words, so the full-text legs read postings; no row can match anyway.
QUESTION = "what did we decide about the release"
# The drive's concurrent lanes: enough to overlap the API's and the database's work on a
# small machine, few enough to leave the machine its liveness answers.
DRIVE_LANES = 4
# What the drive's rows are about (the question names the first).
TOPICS = ("release", "billing", "deploys", "hiring", "pricing", "backups")


class StepFailed(Exception):
    """A warm-up step could not do its work: ``what`` names the statement or document."""

    def __init__(self, what: str, code: str) -> None:
        super().__init__(f"{what} ({code})")
        self.what = what
        self.code = code


@dataclass
class Warmup:
    """The warm-up's progress, read by ``/readyz``; ``run`` drives it once."""

    statements: Sequence[Statement] = field(default_factory=named_statements)
    documents: Sequence[str] = field(default_factory=lambda: client_documents())
    # Run after the built-in steps, before the warm-up is done (tests hold it open here).
    extra: Sequence[tuple[str, Step]] = ()
    state: State = "warming"
    left: list[str] = field(default_factory=list)
    failure: dict[str, str] | None = None
    seconds: float | None = None
    # Whose empty scopes the reads and the rehearsed writes reach: new for every server.
    principal: Principal = field(default_factory=lambda: warm_principal())
    # The drive's principals, one per lane; and how many rounds it ran (for tests and logs).
    lanes: Sequence[Principal] = field(
        default_factory=lambda: [warm_principal() for _ in range(DRIVE_LANES)]
    )
    drive_rounds: int = 0

    def steps(self, schema: GraphQLSchema, limits: EdgeLimits) -> list[tuple[str, Step]]:
        async def sql(svc: Services) -> None:
            await svc.sql.warm()

        async def documents(svc: Services) -> None:
            await anyio.to_thread.run_sync(check_documents, schema, limits, self.documents)

        async def statements(svc: Services) -> None:
            await plan_all(svc, self.statements)

        async def reads(svc: Services) -> None:
            await run_reads(svc, self.principal)

        async def writes(svc: Services) -> None:
            await run_writes(svc, self.principal)

        return [
            ("sql", sql),
            ("model", run_model),
            ("documents", documents),
            ("reads", reads),
            ("writes", writes),
            ("statements", statements),
            ("drive", self.drive),
            *self.extra,
        ]

    async def run(
        self, svc: Services, schema: GraphQLSchema, limits: EdgeLimits, bound: float
    ) -> None:
        steps = self.steps(schema, limits)
        self.left = [name for name, _ in steps]
        started = time.monotonic()
        if bound <= 0:  # switched off: ready as soon as the backends answer
            self.seconds, self.state = 0.0, "warm"
            return
        try:
            async with asyncio.timeout(bound):
                for name, step in steps:
                    try:
                        await step(svc)
                    except StepFailed as e:
                        self._fail(name, e.what, e.code)
                        return
                    except PalimpsestError as e:
                        self._fail(name, name, e.code.value)
                        return
                    except Exception as e:  # an unexpected failure still fails the step
                        self._fail(name, name, type(e).__name__)
                        return
                    self.left.remove(name)
        except TimeoutError:
            log.warning(
                "warm-up stopped after %.0f s (PALIMPSEST_WARMUP_SECONDS), serving with %s left",
                bound,
                ",".join(self.left),
            )
        self.seconds = round(time.monotonic() - started, 1)
        self.state = "warm"
        if not self.left:
            log.info("warm-up done in %.1f s (%d drive rounds)", self.seconds, self.drive_rounds)

    async def drive(self, svc: Services) -> None:
        seconds = svc.settings.admission.warmup_drive_seconds
        executor = svc.db.executor
        # Only on the real database: a test's recording executor has no transaction to roll back.
        if seconds <= 0 or not isinstance(executor, Neo4jExecutor):
            return
        deadline = time.monotonic() + seconds

        async def lane(who: Principal) -> None:
            while time.monotonic() < deadline:
                async with OneTransaction(executor) as one:
                    await drive_round(dataclasses.replace(svc, db=Database(one)), who)
                self.drive_rounds += 1

        try:
            async with asyncio.TaskGroup() as group:
                for who in self.lanes:
                    group.create_task(lane(who))
        except* Exception as failed:
            # Names only: an exception's text may quote a statement or a value.
            kinds = sorted({type(e).__name__ for e in failed.exceptions})
            log.warning(
                "warm-up drive stopped after %d rounds (%s); serving anyway",
                self.drive_rounds,
                ",".join(kinds),
            )

    def _fail(self, step: str, what: str, code: str) -> None:
        self.state = "failed"
        self.failure = {"step": step, "name": what, "code": code}
        # The one line an operator needs: names and a code, never a statement's text or values.
        log.error("warm-up failed at %s: %s (%s); the server stays not ready", step, what, code)

    def wire(self) -> dict[str, object]:
        if self.state == "failed":
            return {"status": "failed", **(self.failure or {})}
        if self.state == "warming":
            return {"status": "warming", "left": list(self.left)}
        return {"status": "warm", "seconds": self.seconds, "skipped": list(self.left)}


def client_documents() -> list[str]:
    """Every root field as the Python client sends it with all its arguments (the doors'
    calls; MCP's tools reach the same resolvers without a document)."""
    found: list[str] = []
    for value in vars(operations).values():
        if isinstance(value, Operation):
            document, _ = value.request(dict.fromkeys(value.args, True))
            found.append(document)
    return sorted(set(found))


def check_documents(schema: GraphQLSchema, limits: EdgeLimits, documents: Sequence[str]) -> None:
    for document in documents:
        prepared, errors = prepare(schema, document, {}, limits)
        if prepared is None or errors:
            raise StepFailed(_operation_name(document), ErrorCode.INVALID_ARGUMENT.value)


def _operation_name(document: str) -> str:
    head = document.split("(", 1)[0].split("{", 1)[0].split()
    return head[1] if len(head) > 1 else "document"


async def run_model(svc: Services) -> None:
    embedder = svc.embedder
    await anyio.to_thread.run_sync(embed_queries, embedder, [QUESTION])
    if isinstance(embedder, ActiveEmbedder):  # and the target model's, during a migration
        await anyio.to_thread.run_sync(embedder.embed_rows, [QUESTION])
    else:
        await anyio.to_thread.run_sync(embedder.embed, [QUESTION])


def warm_principal() -> Principal:
    """A user of a tenant of its own, random per start: its scopes' keys are no tenant's."""
    return Principal(
        tenant_id=f"palimpsest-warmup-{secrets.token_hex(16)}",
        user_id="warmup",
        agent_name="warmup",
        session_id=None,
        run_id=None,
        model=None,
        roles=frozenset(),
        memory_scopes=None,
        sql_scopes=None,
        isolated=False,
    )


async def run_reads(svc: Services, who: Principal) -> None:
    ask = recall.Ask(query=QUESTION, scope=Scope.USER, also_scopes=(Scope.TENANT,))
    await recall.recall(svc, who, ask)
    await recall.search(svc, who, ask)
    await notes.get(svc, who, Scope.USER, "warmup")
    await notes.list_entries(svc, who, Scope.USER, "", 10, None)
    view = facts.time_view(svc, None, None)
    await facts.list_facts(svc, who, Scope.USER, view, None, None, 10)


async def run_writes(svc: Services, who: Principal) -> None:
    """Rehearsed on the real database only (a test's recording executor has no transaction
    to roll back)."""
    executor = svc.db.executor
    if not isinstance(executor, Neo4jExecutor):
        return
    await write_common(dataclasses.replace(svc, db=Database(Rehearsal(executor))), who)


async def write_common(svc: Services, who: Principal) -> None:
    """A note with its vector and a fact, in ``who``'s user scope (on a rolled-back executor)."""
    await notes.set_value(svc, who, Scope.USER, "warmup/note", {"text": QUESTION}, None, True, None)
    draft = FactDraft(
        subject=EntityRef(type="project", name="warmup"),
        predicate="owned by",
        object=None,
        object_value="team",
    )
    await facts.assert_facts(svc, who, Scope.USER, [draft])


async def drive_round(svc: Services, who: Principal) -> None:
    """One round of the drive on a scope that looks used, as callers' scopes do: notes new
    and rewritten (some with vectors), a document, facts on new and known entities, then the
    common reads, alone and with a wider scope, at two page sizes. The database plans a
    statement again for other parameter shapes (a list of five hits is not a list of one),
    so the round sends the shapes traffic sends, not only one of each."""
    for i, topic in enumerate(TOPICS):
        value = {"text": f"we decided about the {topic}"}
        await notes.set_value(svc, who, Scope.USER, f"warmup/{i}", value, None, i < 4, None)
    await notes.set_value(svc, who, Scope.USER, "warmup/0", QUESTION, None, True, None)
    markdown = "# Decisions\n\n" + "\n\n".join(f"About the {t}: we chose a plan." for t in TOPICS)
    await document_import.import_document(svc, who, Scope.USER, markdown, None, None, None)
    for topic in (*TOPICS[:3], TOPICS[0]):  # the last one names a known entity
        draft = FactDraft(
            subject=EntityRef(type="project", name=topic),
            predicate="owned by",
            object=None,
            object_value="team",
        )
        await facts.assert_facts(svc, who, Scope.USER, [draft])
    for also in ((), (Scope.TENANT,)):
        for top_k in (5, 10):
            ask = recall.Ask(query=QUESTION, scope=Scope.USER, top_k=top_k, also_scopes=also)
            await recall.recall(svc, who, ask)
            await recall.search(svc, who, ask)
    await notes.get(svc, who, Scope.USER, "warmup/0")
    await notes.get(svc, who, Scope.USER, "warmup/none")
    await notes.list_entries(svc, who, Scope.USER, "warmup/", 100, None)
    await facts.list_facts(svc, who, Scope.USER, facts.time_view(svc, None, None), None, None, 100)


async def plan_all(svc: Services, statements: Sequence[Statement]) -> None:
    """Each statement planned in one read session, in order; the first that cannot be
    planned fails the step by name. The procedure engine's statements only where it answers:
    a server without our extension (Aura) cannot plan a call to it."""
    current: list[str] = []
    absent = (
        frozenset()
        if svc.search_engine.name == "procedure"
        else recall_procedure.NAMES | recall_one.NAMES
    )

    async def work(run: RawRun) -> None:
        for statement in statements:
            if statement.name in absent:
                continue
            current[:] = [statement.name]
            await run(explained(statement), {})

    try:
        await svc.db.executor.execute(work, write=False)
    except PalimpsestError as e:
        raise StepFailed(current[0] if current else "statements", _code(e)) from e


def _code(e: PalimpsestError) -> str:
    return database_code(e) or e.code.value
