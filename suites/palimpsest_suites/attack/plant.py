"""Canaries: unique random strings planted in every plane and scope each principal can write.

Every member plants, in each scope it reaches on the memory plane, a key/value entry, a
document (its chunks) and a fact (its entities, with a source quote from that chunk), and in
each scope it reaches on the SQL plane a row; each tenant admin stores an ontology whose
canonical type name is a canary reachable only through an alias. Each member's run token
carries its own canary as ``run``, so provenance is checked too. What was planted where is
the ground truth the leak check compares every response with.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest_suites.attack.matrix import Identity, Member, Plane
from palimpsest_suites.wire import WireClient

PHRASE = "vault phrase harbour gate"  # what attackers search for


def new_canary() -> str:
    return f"cnry{secrets.token_hex(10)}"


@dataclass(frozen=True, slots=True)
class Canary:
    text: str
    kind: str  # kv, document, fact, sql, ontology, provenance
    plane: Plane
    identity: Identity
    writer: Member


@dataclass(frozen=True, slots=True)
class Planted:
    """An object an id or key can address."""

    kind: str  # document, chunk, fact, entity, sql, key
    ref: str
    identity: Identity
    canary: str


@dataclass
class Garden:
    canaries: list[Canary] = field(default_factory=list)
    objects: list[Planted] = field(default_factory=list)
    run_canary: dict[Member, str] = field(default_factory=dict)

    def visible_to(self, reader: Member) -> frozenset[str]:
        seen: set[str] = set()
        ids = {p: reader.identities(p) for p in Plane}
        for c in self.canaries:
            if c.kind == "provenance":
                if reader.sees_provenance_of(c.writer):
                    seen.add(c.text)
            elif c.identity in ids[c.plane]:
                seen.add(c.text)
        return frozenset(seen)


class PlantError(RuntimeError):
    pass


async def call(client: WireClient, token: str, query: str, **variables: Any) -> Any:
    reply = await client.post_graphql(query, variables, token)
    body = reply.json()
    if body.get("errors"):
        raise PlantError(f"planting failed: {body['errors'][0]}")
    return body["data"]


SET = """mutation($s: Scope!, $k: String!, $v: JSON!) {
  memorySet(scope: $s, key: $k, value: $v, embed: true) { key } }"""
IMPORT = """mutation($s: Scope!, $m: String!, $t: String, $p: String) {
  importDocument(scope: $s, markdown: $m, title: $t, path: $p) {
    summary { id } chunks { id type text } } }"""
ASSERT = """mutation($s: Scope!, $f: [FactInput!]!) {
  assertFacts(scope: $s, facts: $f, place: false) {
    fact { id subject { id } object { id } } } }"""
SQL = """mutation($s: Scope!, $b: [SqlStatementInput!]!) {
  sqlExec(scope: $s, statements: $b) { results { rowsAffected } } }"""
ONTOLOGY = "mutation($m: String!) { setOntology(markdown: $m) { status } }"


async def plant(
    client: WireClient, garden: Garden, who: Member, token: str, ontology: bool = True
) -> None:
    """Plant ``who``'s canaries in every scope it reaches."""
    garden.canaries.append(
        Canary(garden.run_canary[who], "provenance", Plane.MEMORY, who.identity(Scope.USER), who)
    )
    role = who.who.role
    for scope in sorted(who.reach(Plane.MEMORY)):
        ident = who.identity(scope)
        kv, doc, fact = new_canary(), new_canary(), new_canary()
        key = f"secret/{who.tenant}/{role}"
        await call(client, token, SET, s=scope, k=key, v=f"The {PHRASE} is {kv}.")
        garden.canaries.append(Canary(kv, "kv", Plane.MEMORY, ident, who))
        garden.objects.append(Planted("key", key, ident, kv))

        text = f"The {PHRASE} for {role} is {doc}."
        markdown = f"# Vault notes\n\n{text}\n"
        data = await call(
            client, token, IMPORT, s=scope, m=markdown, t=f"vault {role}", p=f"/{key}"
        )
        document = data["importDocument"]
        garden.canaries.append(Canary(doc, "document", Plane.MEMORY, ident, who))
        garden.objects.append(Planted("document", document["summary"]["id"], ident, doc))
        paragraph = next(c for c in document["chunks"] if doc in c["text"])
        garden.objects.append(Planted("chunk", paragraph["id"], ident, doc))

        start = paragraph["text"].index(doc)
        fact_input = {
            "subject": {"type": "vault", "name": f"vault {fact}"},
            "predicate": "guards",
            "objectValue": f"gate {fact}",
            "text": f"The {PHRASE} guards {fact}",
            "source": {"chunkId": paragraph["id"], "start": start, "end": start + len(doc)},
        }
        [asserted] = (await call(client, token, ASSERT, s=scope, f=[fact_input]))["assertFacts"]
        garden.canaries.append(Canary(fact, "fact", Plane.MEMORY, ident, who))
        garden.objects.append(Planted("fact", asserted["fact"]["id"], ident, fact))
        for end in ("subject", "object"):
            garden.objects.append(Planted("entity", asserted["fact"][end]["id"], ident, fact))

    for scope in sorted(who.reach(Plane.SQL)):
        ident = who.identity(scope)
        row = new_canary()
        batch = [
            {"statement": "CREATE TABLE IF NOT EXISTS vault (role TEXT, body TEXT)"},
            {"statement": "INSERT INTO vault (role, body) VALUES (?, ?)", "args": [role, row]},
        ]
        await call(client, token, SQL, s=scope, b=batch)
        garden.canaries.append(Canary(row, "sql", Plane.SQL, ident, who))
        tenant, _, owner = ident
        garden.objects.append(Planted("sql", scope_key(tenant, scope, owner), ident, row))

    if ontology and who.who.admin and not who.who.isolated:
        name = new_canary()
        markdown = (
            "# Tenant ontology\nstatus: confirmed\n\n"
            f"## vault-{name}\nscope: tenant\naliases: vault, strongroom\n\n"
            "## person\nscope: user\n"
        )
        await call(client, token, ONTOLOGY, m=markdown)
        ident = who.identity(Scope.TENANT)
        garden.canaries.append(Canary(name, "ontology", Plane.MEMORY, ident, who))
