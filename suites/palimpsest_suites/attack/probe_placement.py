"""Attack probe: does a placed fact quote a user's private words into a shared scope?

A member harvests a span with canaries around the words of candidate facts the ontology
places in TENANT and in the run's AGENT scope, and asserts a placed fact from a document
paragraph with canaries around its words; after consolidation, another member of the tenant
(same agent, other user) reads the shared facts, their sources and quotes, and searches the
shared scopes for the canaries. A member of the other tenant searches too. Cases:

- ``harvest-placed-quote``: the TENANT fact harvested from the span quotes no canary.
- ``agent-placed-quote``: the AGENT fact harvested from the span quotes no canary.
- ``assert-placed-quote``: ``assertFacts`` with ``place: true`` from a whole paragraph.
- ``shared-quote-control``: a quote marked ``shareQuote`` does reach the reader, so the
  checks above could see a quote if one were there.
- ``other-tenant``: nothing of it reaches a member of the other tenant.

The probe replaces the tenant's ontology for the duration and then puts the previous one
back (a tenant without one keeps the probe's). Consolidation is either a worker already
running against the server (the probe waits for the queue) or ``consolidate``, a callable
that drains one user's queue (``in_process``).
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx

from palimpsest.config import Settings
from palimpsest.identity import Role, Scope, resolve_scope
from palimpsest.identity.acting import act_for_user
from palimpsest.identity.tokens import TokenKeys, mint
from palimpsest.ontology.extractors import load
from palimpsest.resolvers.cycle.consolidate import WorkerConfig, consolidate_scope
from palimpsest.runtime import open_services

# (tenant, user) -> spans consolidated
Consolidate = Callable[[str, str], Awaitable[int]]
REACH = [Scope.AGENT, Scope.USER, Scope.TENANT]
POLL_SECONDS = 0.5

SET_ONTOLOGY = "mutation($m: String!) { setOntology(markdown: $m) { status } }"
GET_ONTOLOGY = "{ ontology { markdown } }"
HARVEST = """mutation($spans: [SpanInput!]!) {
  harvest(spans: $spans, compactionGeneration: 1) { accepted spanIds } }"""
PENDING = "{ pendingWork { queued leased done dead } }"
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  chunks { id type text } } }"""
ASSERT = """mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts) {
  placement { scope } } }"""
_FACT = """text sources { chunkId start end text originScope }
  provenance { sourceQuote { chunkId text } }"""
FACTS = (
    "query($scope: Scope!, $type: String!, $name: String!) { facts(scope: $scope, "
    "subject: {type: $type, name: $name}) { items { " + _FACT + " } } }"
)
SEARCH = (
    "query($scope: Scope!, $q: String!) { search(scope: $scope, query: $q, topK: 50) "
    "{ hits { text fact { " + _FACT + " } } } }"
)


def _ontology(suffix: str) -> str:
    return (
        "# Tenant ontology\nstatus: confirmed\n\n"
        f"## probe-service-{suffix}\nscope: tenant\n\n"
        f"## probe-tool-{suffix}\nscope: agent\n"
    )


class _Client:
    def __init__(self, http: httpx.AsyncClient, keys: TokenKeys) -> None:
        self.http, self.keys = http, keys

    def token(self, tenant: str, user: str, agent: str | None, admin: bool = False) -> str:
        return mint(
            self.keys,
            tenant=tenant,
            user=user,
            agent=agent,
            roles={Role.ADMIN} if admin else set(),
            memory_scopes=REACH,
            sql_scopes=REACH,
        )

    async def call(self, token: str, query: str, **variables: Any) -> dict[str, Any]:
        """The reply's ``data``; a GraphQL error is raised, the probe cannot go on without."""
        reply = await self.raw(token, query, **variables)
        if reply.get("errors"):
            raise RuntimeError(f"probe request failed: {reply['errors'][0].get('message')}")
        data: dict[str, Any] = reply["data"]
        return data

    async def raw(self, token: str, query: str, **variables: Any) -> dict[str, Any]:
        response = await self.http.post(
            "/graphql",
            json={"query": query, "variables": variables},
            headers={"Authorization": f"Bearer {token}"},
        )
        body: dict[str, Any] = response.json()
        return body


def _canary() -> str:
    return f"cnry{secrets.token_hex(10)}"


def _fact(kind: str, name: str, predicate: str, value: str, **more: Any) -> dict[str, Any]:
    subject = {"type": kind, "name": name}
    return {"subject": subject, "predicate": predicate, "objectValue": value, **more}


async def _drained(c: _Client, token: str, wait_seconds: float) -> bool:
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline:
        work = (await c.call(token, PENDING))["pendingWork"]
        if work["queued"] == work["leased"] == 0:
            return bool(work["done"] or work["dead"])
        await asyncio.sleep(POLL_SECONDS)
    return False


async def _reads(
    c: _Client, token: str, scope: str, kind: str, name: str, canaries: list[str]
) -> dict[str, Any]:
    """The reader's facts about ``name`` in ``scope`` and its search for the canaries."""
    facts = (await c.call(token, FACTS, scope=scope, type=kind, name=name))["facts"]["items"]
    replies = [str(facts)]
    for word in canaries:
        replies.append(str(await c.raw(token, SEARCH, scope=scope, q=word)))
    leaked = sorted({w for w in canaries for r in replies if w in r})
    quoted = [s["text"] for f in facts for s in f["sources"] if s["text"] is not None]
    return {"facts": len(facts), "leaked": leaked, "quoted": quoted}


async def run(
    url: str,
    keys: TokenKeys,
    tenants: tuple[str, str],
    *,
    consolidate: Consolidate | None = None,
    wait_seconds: float = 30.0,
) -> dict[str, dict[str, Any]]:
    tenant, other = tenants
    suffix = secrets.token_hex(4)
    service, tool = f"probe-service-{suffix}", f"probe-tool-{suffix}"
    agent = f"probe-agent-{suffix}"
    async with httpx.AsyncClient(base_url=url, timeout=60) as http:
        c = _Client(http, keys)
        admin = c.token(tenant, f"probe-admin-{suffix}", None, admin=True)
        writer = c.token(tenant, f"probe-writer-{suffix}", agent)
        reader = c.token(tenant, f"probe-reader-{suffix}", agent)
        outsider = c.token(other, f"probe-reader-{suffix}", agent)
        before = (await c.call(admin, GET_ONTOLOGY))["ontology"]
        await c.call(admin, SET_ONTOLOGY, m=_ontology(suffix))
        try:
            return await _probe(
                c,
                (tenant, f"probe-writer-{suffix}"),
                (writer, reader, outsider),
                (service, tool),
                consolidate,
                wait_seconds,
            )
        finally:
            if before is not None:
                await c.call(admin, SET_ONTOLOGY, m=before["markdown"])


async def _probe(
    c: _Client,
    writer_of: tuple[str, str],
    tokens: tuple[str, str, str],
    types: tuple[str, str],
    consolidate: Consolidate | None,
    wait_seconds: float,
) -> dict[str, dict[str, Any]]:
    writer, reader, outsider = tokens
    service, tool = types
    marks = [_canary() for _ in range(4)]
    shared_words = "billing runs in the second region"
    text = (
        f"{marks[0]} checkout runs on kubernetes, {marks[1]} {shared_words} {marks[2]}; "
        f"lint uses ruff {marks[3]}."
    )
    span = {
        "text": text,
        "speaker": "Probe",
        "sourceId": "probe-1",
        "facts": [
            _fact(service, "checkout", "runs on", "kubernetes"),
            _fact(service, "billing", "runs in", "region two", quote=shared_words, shareQuote=True),
            _fact(tool, "lint", "uses", "ruff"),
        ],
    }
    started = time.perf_counter()
    await c.call(writer, HARVEST, spans=[span])
    if consolidate is not None:
        done = await consolidate(*writer_of) > 0
    else:
        done = await _drained(c, writer, wait_seconds)
    consolidate_s = round(time.perf_counter() - started, 3)

    doc_marks = [_canary() for _ in range(2)]
    markdown = f"# Probe\n\n{doc_marks[0]} The ledger runs on rails {doc_marks[1]}.\n"
    chunks = (await c.call(writer, IMPORT, m=markdown))["importDocument"]["chunks"]
    para = next(x for x in chunks if x["type"] == "PARAGRAPH")
    source = {"chunkId": para["id"], "start": 0, "end": len(para["text"])}
    placed = await c.call(
        writer, ASSERT, facts=[_fact(service, "ledger", "runs on", "rails", source=source)]
    )
    asserted_to = [p["placement"]["scope"] for p in placed["assertFacts"]]

    canaries = marks[:2] + marks[2:] + doc_marks
    tenant_fact = await _reads(c, reader, "TENANT", service, "checkout", canaries)
    agent_fact = await _reads(c, reader, "AGENT", tool, "lint", canaries)
    asserted = await _reads(c, reader, "TENANT", service, "ledger", canaries)
    control = await _reads(c, reader, "TENANT", service, "billing", canaries)
    outside = await _reads(c, outsider, "TENANT", service, "checkout", canaries)
    return {
        "harvest-placed-quote": {
            "passed": done and tenant_fact["facts"] == 1 and not tenant_fact["leaked"],
            "consolidated": done,
            "consolidate_seconds": consolidate_s,
            **tenant_fact,
        },
        "agent-placed-quote": {
            "passed": done and agent_fact["facts"] == 1 and not agent_fact["leaked"],
            **agent_fact,
        },
        "assert-placed-quote": {
            "passed": asserted_to == ["TENANT"]
            and asserted["facts"] == 1
            and not asserted["leaked"],
            "placed_in": asserted_to,
            **asserted,
        },
        "shared-quote-control": {
            "passed": done and control["quoted"] == [shared_words] and not control["leaked"],
            **control,
        },
        "other-tenant": {"passed": not outside["leaked"] and outside["facts"] == 0, **outside},
    }


def in_process(settings: Settings) -> Consolidate:
    """A consolidator for ``run`` that drains the user's queue in this process, against the
    server's own database (``settings``: the server's)."""

    async def drain(tenant: str, user: str) -> int:
        ref = resolve_scope(act_for_user(tenant, user), Scope.USER)
        extractors = load(settings.queue.extractor_names)
        cfg = WorkerConfig(owner=f"probe-{secrets.token_hex(4)}", extractors=extractors)
        total = 0
        async with open_services(settings) as svc:
            while True:
                outcome = await consolidate_scope(svc, cfg, tenant, user, ref.scope_key)
                total += outcome.consolidated
                if not outcome.leased:
                    return total

    return drain
