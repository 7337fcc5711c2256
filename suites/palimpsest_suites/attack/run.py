"""The attack run: plant, introspect, call every field as every principal, check every reply.

Checks per reply: no canary the caller may not see (``Garden.visible_to``), no ``INTERNAL``
error, no 5xx without a coded GraphQL error, every error coded. Every request whose
arguments hold a foreign id or key is paired with the same request holding a missing one,
and the two replies must be identical once the ids are masked (the missing-id request is
sent before and after, and the pair counts only when those two agree: other principals write
into shared scopes meanwhile). Mutations never address a
planted object the caller may legitimately reach, so after the destructive fields (run
last) every planted object must still be there.
"""

from __future__ import annotations

import asyncio
import random
import re
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from graphql import build_client_schema, get_introspection_query

from palimpsest.identity import Scope
from palimpsest.identity.tokens import TokenKeys, mint
from palimpsest_suites.attack import findings, matrix, plant
from palimpsest_suites.attack.generate import Field, Values, fields_of, fresh_id
from palimpsest_suites.attack.matrix import Member, Plane
from palimpsest_suites.attack.plant import Garden
from palimpsest_suites.attack.probe_placement import Consolidate
from palimpsest_suites.attack.probes import run_probes
from palimpsest_suites.wire import Reply, WireClient

DESTRUCTIVE = re.compile(r"delete|erase|forget|purge|drop|remove|^set", re.IGNORECASE)
# Fields that erase everything the caller owns, by design: they run as a bystander (the same
# claims for a user with nothing planted), so the census still proves nobody else lost a row.
SELF_ERASING = frozenset({"eraseMe"})
PAIR_ATTEMPTS = 3
Say = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class Job:
    member: Member
    field: Field
    scope: str | None
    seed: int


class Attack:
    def __init__(
        self,
        url: str,
        keys: TokenKeys,
        seed: int,
        say: Say,
        scopes_per_field: int = 4,
        consolidate: Consolidate | None = None,
    ) -> None:
        self.url, self.keys, self.say = url, keys, say
        self.consolidate = consolidate
        self.scopes_per_field = scopes_per_field
        self.rng = random.Random(seed)
        self.tenants = (f"atk-{secrets.token_hex(5)}", f"atk-{secrets.token_hex(5)}")
        self.members = matrix.members(self.tenants)
        self.garden = Garden()
        self.tokens: dict[Member, str] = {}
        self.bystanders: dict[Member, str] = {}
        self.visible: dict[Member, frozenset[str]] = {}
        self.all_canaries: frozenset[str] = frozenset()
        self.tally = findings.Tally()
        self.fields: list[Field] = []

    # -- set-up -------------------------------------------------------------------------

    async def prepare(self) -> None:
        for m in self.members:
            run = plant.new_canary()
            self.garden.run_canary[m] = run
            w = m.who
            for tokens, user in ((self.tokens, w.user), (self.bystanders, _bystander(w.user))):
                tokens[m] = mint(
                    self.keys,
                    tenant=m.tenant,
                    user=user,
                    agent=w.agent,
                    run=f"run-{run}",
                    roles=m.roles,
                    isolated=w.isolated,
                    memory_scopes=w.memory,
                    sql_scopes=w.sql,
                    ttl_seconds=6 * 3600,
                )
        client = WireClient.for_url(self.url)
        try:
            # Admins first: their ontology is in place before anyone else writes.
            for m in sorted(self.members, key=lambda m: not m.who.admin):
                await plant.plant(client, self.garden, m, self.tokens[m])
            self.fields = await self.introspect(client)
            for m in self.members:
                await self.check_reach(client, m)
        finally:
            await client.close()
        self.all_canaries = frozenset(c.text for c in self.garden.canaries)
        self.visible = {m: self.garden.visible_to(m) for m in self.members}
        self.say(
            f"planted {len(self.garden.canaries)} canaries for {len(self.members)} principals; "
            f"{len(self.fields)} fields"
        )

    async def check_reach(self, client: WireClient, m: Member) -> None:
        """The server's account of a token's grants must match the model the leak check uses."""
        me = await plant.call(client, self.tokens[m], "{ me { memoryScopes sqlScopes } }")
        for plane, said in ((Plane.MEMORY, "memoryScopes"), (Plane.SQL, "sqlScopes")):
            expected = sorted(s.value for s in m.reach(plane))
            if sorted(me["me"][said]) != expected:
                self.tally.reach_disagreements += 1
                self.tally.note(
                    "grants unlike the model",
                    who=m.name,
                    plane=plane.value,
                    server=sorted(me["me"][said]),
                    model=expected,
                )

    async def introspect(self, client: WireClient) -> list[Field]:
        token = self.tokens[self.members[0]]
        reply = await client.post_graphql(get_introspection_query(descriptions=False), {}, token)
        return fields_of(build_client_schema(reply.json()["data"]))

    # -- the run ------------------------------------------------------------------------

    def jobs(self, destructive: bool) -> list[Job]:
        out: list[Job] = []
        for f in self.fields:
            if bool(DESTRUCTIVE.search(f.name)) is not destructive:
                continue
            scopes: list[str | None] = [s.value for s in Scope] if f.has_scope else [None]
            for m in self.members:
                chosen = self.rng.sample(scopes, min(self.scopes_per_field, len(scopes)))
                out.extend(Job(m, f, s, self.rng.getrandbits(32)) for s in chosen)
        self.rng.shuffle(out)
        return out

    async def run(self, min_requests: int, concurrency: int) -> dict[str, Any]:
        started = time.perf_counter()
        await self.prepare()
        self.say(f"planted in {time.perf_counter() - started:.1f}s")
        rounds = 0
        while self.tally.requests < min_requests or rounds == 0:
            await self.execute(self.jobs(destructive=False), concurrency)
            rounds += 1
            self.say(f"round {rounds}: {self.tally.requests} requests")
        await self.execute(self.jobs(destructive=True), concurrency)
        await self.census()
        probes = await run_probes(self.url, self.keys, self.tenants, self.consolidate)
        t = self.tally
        seen_kinds = Counter(c.kind for c in self.garden.canaries if c.text in t.seen)
        return {
            "requests": t.requests,
            "leaks": t.leaks,
            "probes": probes,
            "probes_failed": sorted(name for name, case in probes.items() if not case["passed"]),
            "internal": t.internal,
            "untyped_5xx": t.untyped_5xx,
            "uncoded_errors": t.uncoded_errors,
            "foreign_id_mismatches": t.foreign_id_mismatches,
            "destroyed": t.destroyed,
            "reach_disagreements": t.reach_disagreements,
            "foreign_id_pairs": t.pairs,
            "unstable_pairs": t.unstable_pairs,
            "seconds": round(time.perf_counter() - started, 1),
            "rounds": rounds,
            "principals": len(self.members),
            "fields": len(self.fields),
            "canaries": len(self.garden.canaries),
            "canaries_seen_by_kind": dict(sorted(seen_kinds.items())),
            "error_codes": dict(sorted(t.codes.items())),
            "field_names": sorted(f.name for f in self.fields),
            "fields_called": sorted(t.field_seconds),
            "slowest_fields": {
                k: round(v, 1)
                for k, v in sorted(t.field_seconds.items(), key=lambda kv: -kv[1])[:8]
            },
            "findings": t.findings,
        }

    async def execute(self, jobs: list[Job], concurrency: int) -> None:
        queue: asyncio.Queue[Job] = asyncio.Queue()
        for job in jobs:
            queue.put_nowait(job)

        async def worker() -> None:
            client = WireClient.for_url(self.url)
            try:
                while not queue.empty():
                    await self.one(client, queue.get_nowait())
            finally:
                await client.close()

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    async def one(self, client: WireClient, job: Job) -> None:
        values = Values(random.Random(job.seed))
        own = self.picker(job, "own", [])
        variables = values.variables(job.field, job.scope, own)
        await self.send(client, job, variables)
        picked: list[str] = []
        values = Values(random.Random(job.seed))
        foreign_vars = values.variables(job.field, job.scope, self.picker(job, "foreign", picked))
        if not picked:
            return
        swap = {
            p: fresh_id() if len(p) == 32 else f"missing/{secrets.token_hex(6)}" for p in picked
        }
        missing_vars = orjson.loads(findings.replace_ids(orjson.dumps(foreign_vars), swap))
        names_f = {p: f"<id{i}>" for i, p in enumerate(picked)}
        names_m = {swap[p]: f"<id{i}>" for i, p in enumerate(picked)}
        # Other principals write into shared scopes meanwhile, so a missing-id reply before and
        # after the foreign one must agree (the scope held still) before the two are compared.
        self.tally.pairs += 1
        for _ in range(PAIR_ATTEMPTS):
            before = await self.send(client, job, missing_vars)
            foreign = await self.send(client, job, foreign_vars)
            after = await self.send(client, job, missing_vars)
            if before is None or foreign is None or after is None:
                return
            masked_m, masked_after = findings.mask(before, names_m), findings.mask(after, names_m)
            if masked_m == masked_after:
                break
        else:
            self.tally.unstable_pairs += 1
            return
        masked_f = findings.mask(foreign, names_f)
        if masked_f != masked_m:
            self.tally.foreign_id_mismatches += 1
            self.tally.note(
                "foreign id answered unlike a missing one",
                who=job.member.name,
                field=job.field.name,
                scope=job.scope,
                foreign=masked_f.decode()[:400],
                missing=masked_m.decode()[:400],
            )

    def picker(self, job: Job, mode: str, picked: list[str]) -> Callable[[str], str]:
        """Ids and keys for a request: own (reads only), foreign, or missing."""
        m, scope = job.member, job.scope
        here = m.identity(Scope(scope)) if scope else None
        mutation = job.field.operation == "mutation"
        rng = random.Random(job.seed ^ 0x5EED)

        def reachable(obj: plant.Planted) -> bool:
            if obj.kind == "sql" and job.field.name.lower().startswith("sqlerase"):
                return m.lists_sql_database(obj.identity, Scope(scope or "TENANT"))
            return obj.identity == here

        def pick(kind: str) -> str:
            if kind == "key" and mutation:
                # Keys name entries inside the caller's own scope: a write under another
                # scope's key is a legitimate new entry, so writes use keys of their own.
                return f"scratch/{secrets.token_hex(4)}"
            pool = [o for o in self.garden.objects if o.kind == kind]
            if mode == "own" and not mutation:
                mine = [o.ref for o in pool if reachable(o)]
                if mine:
                    return rng.choice(mine)
            # A key is foreign only when this scope holds no planted entry under it.
            taken = {o.ref for o in pool if reachable(o)}
            others = [o.ref for o in pool if not reachable(o) and o.ref not in taken]
            if mode == "foreign" and others:
                choice = rng.choice(others)
                picked.append(choice)
                return choice
            return fresh_id() if kind != "key" else f"scratch/{secrets.token_hex(4)}"

        return pick

    async def send(self, client: WireClient, job: Job, variables: dict[str, Any]) -> bytes | None:
        provided = list(variables)
        document = job.field.document(provided)
        started = time.perf_counter()
        tokens = self.bystanders if job.field.name in SELF_ERASING else self.tokens
        reply = await client.post_graphql(document, variables, tokens[job.member])
        self.tally.requests += 1
        self.tally.field_seconds[job.field.name] += time.perf_counter() - started
        return self.check(job, reply)

    def check(self, job: Job, reply: Reply) -> bytes | None:
        t, where = self.tally, {"who": job.member.name, "field": job.field.name, "scope": job.scope}
        found = {c.decode() for c in findings.CANARY.findall(reply.body)} & self.all_canaries
        forbidden = found - self.visible[job.member]
        t.seen |= found - forbidden
        if forbidden:
            t.leaks += len(forbidden)
            leaked = [c for c in self.garden.canaries if c.text in forbidden]
            what = sorted({_describe(c) for c in leaked})
            t.note("leak", **where, leaked=what)
        try:
            body = reply.json()
            errors = body.get("errors") or [] if isinstance(body, dict) else None
        except orjson.JSONDecodeError:
            body, errors = None, None
        if errors is None:
            if reply.status >= 500:
                t.untyped_5xx += 1
                t.note("untyped 5xx", **where, status=reply.status, body=reply.body[:200].decode())
            return None
        for e in errors:
            code = (e.get("extensions") or {}).get("code")
            t.codes[str(code)] += 1
            if code is None:
                t.uncoded_errors += 1
                t.note("error without a code", **where, message=str(e.get("message"))[:200])
            elif code == "INTERNAL":
                t.internal += 1
                t.note("INTERNAL", **where, message=str(e.get("message"))[:200])
        return reply.body

    # -- after the destructive fields: everything planted is still there ----------------

    async def census(self) -> None:
        client = WireClient.for_url(self.url)
        by_owner = {c.text: c.writer for c in self.garden.canaries}
        try:
            for obj in self.garden.objects:
                if obj.kind in ("chunk", "entity"):
                    continue
                query, variables = findings.census_query(obj)
                scope = obj.identity[1]
                reply = await client.post_graphql(
                    query, {**variables, "s": scope.value}, self.tokens[by_owner[obj.canary]]
                )
                if obj.canary.encode() not in reply.body:
                    self.tally.destroyed += 1
                    self.tally.note("planted object gone", kind=obj.kind, scope=scope.value)
        finally:
            await client.close()


def _bystander(user: str | None) -> str | None:
    return f"{user}-bystander" if user else None


def _describe(c: plant.Canary) -> str:
    where = "" if c.kind == "provenance" else f" in {c.identity[1].value}"
    return f"{c.kind} of {c.writer.name}{where}"


async def run_attack(
    url: str,
    keys: TokenKeys,
    min_requests: int,
    concurrency: int,
    seed: int,
    say: Say,
    scopes_per_field: int = 4,
    consolidate: Consolidate | None = None,
) -> dict[str, Any]:
    """One attack run; ``scopes_per_field`` < 4 samples the scopes (a bounded run);
    ``consolidate`` drains a user's harvested spans for the placement probe."""
    attack = Attack(url, keys, seed, say, scopes_per_field, consolidate)
    return await attack.run(min_requests, concurrency)


__all__ = ["Plane", "run_attack"]
