"""Copies of a template tenant, written in bulk (``bench recall-latency --tenants``).

The product's writers load about 15 rows a second on this machine; 2.5M rows would take two
days. So each size class has one template tenant written through them (``tenant_write``),
and its other tenants are copies: every node and relationship of the template's scope read
back as they are (labels, type, every property) and written again by bulk ``UNWIND``
statements under the copy's tenant. A copy therefore holds exactly the rows the writers
write (term statistics, quota counters, queue rows, revisions included), with three
differences: ``tenant_id`` and ``scope_key`` (and ``writer_key``, the same hash) are the
copy's; every id (any 32-hex string value, the way the product makes ids) is replaced by one
derived from it and the copy's tenant, consistently, so references between rows still hold;
and every embedding is the template's plus Gaussian noise (``NOISE``), so no two tenants share
a vector and the vector index meets clusters, as with ``HashEmbedder`` data. Texts are the
template's: scope-local BM25 makes a tenant's ranking its own anyway.

A copy is one transaction (its ``Scope`` row is written with it), so a load that stops
part-way resumes by skipping the tenants whose ``Scope`` row exists.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from neo4j import AsyncDriver
from neo4j.exceptions import ConstraintError

from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key
from palimpsest_bench.tenant_plan import USER

NOISE = 0.35  # norm of the noise added to a copy's unit vectors (cosine to the original ~0.94)
_ID = re.compile(r"^[0-9a-f]{32}$")
SKIPPED_LABELS = frozenset({"SchemaInfo"})  # the one unscoped node: never a tenant's

READ_LABELS = "CALL db.labels() YIELD label RETURN label"
READ_NODES = """
MATCH (n:$($label) {scope_key: $key})
RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props
"""
READ_RELATIONSHIPS = """
MATCH (a:$($label) {scope_key: $key})-[r]->(b)
RETURN elementId(r) AS id, elementId(a) AS a, elementId(b) AS b, b.scope_key AS b_key,
       type(r) AS type,
       properties(r) AS props
"""
# One copy or several: nodes first, then relationships between them by position in $nodes.
WRITE_COPY = """
CALL (*) {
  UNWIND $nodes AS row
  CREATE (n:$(row.labels))
  SET n = row.props
  RETURN collect(n) AS made
}
UNWIND $relationships AS r
WITH made[r.a] AS a, made[r.b] AS b, r
CREATE (a)-[x:$(r.type)]->(b)
SET x = r.props
RETURN count(x) AS relationships
"""
PRESENT_SCOPES = """
UNWIND $keys AS key
MATCH (s:Scope {scope_key: key})
RETURN key
"""


def key_of(tenant: str) -> str:
    return scope_key(tenant, Scope.USER, USER)


def derived_id(old: str, tenant: str) -> str:
    """The copy's id for the template's ``old``: 32 hex digits, like the product's."""
    return hashlib.blake2b(f"{tenant}/{old}".encode(), digest_size=16).hexdigest()


@dataclass(slots=True)
class Row:
    """One node or relationship of the template: what a copy changes is listed by key."""

    props: dict[str, Any]
    labels: list[str] = field(default_factory=list)  # nodes
    type: str = ""  # relationships
    ends: tuple[int, int] = (0, 0)  # relationships: positions of their nodes
    ids: list[str] = field(default_factory=list)  # keys holding an id
    id_lists: list[str] = field(default_factory=list)  # keys holding a list of ids
    vectors: list[str] = field(default_factory=list)  # keys holding an embedding


@dataclass(slots=True)
class Template:
    tenant: str
    nodes: list[Row]
    relationships: list[Row]
    dimensions: int

    @property
    def size(self) -> int:
        return len(self.nodes) + len(self.relationships)


def classify(props: Mapping[str, Any], tenant: str, dimensions: int) -> Row:
    """A template row, with the keys a copy must change; refuses a property that names the
    template's tenant or one of its ids inside a longer string (a copy would keep it)."""
    row = Row(dict(props))
    for name, value in props.items():
        if name in ("tenant_id", "scope_key", "writer_key"):
            continue
        if isinstance(value, str):
            if _ID.match(value):
                row.ids.append(name)
            elif tenant in value:
                raise ValueError(f"property {name!r} names the template's tenant inside text")
        elif isinstance(value, list) and value:
            if all(isinstance(v, float) for v in value) and len(value) == dimensions:
                row.vectors.append(name)
            elif all(isinstance(v, str) and _ID.match(v) for v in value):
                row.id_lists.append(name)
    return row


def copy_rows(
    template: Template, tenant: str, rng: np.random.Generator
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The template's rows as the copy for ``tenant`` (nodes, relationships: parameters of
    ``WRITE_COPY`` relative to this copy's first node)."""
    key = key_of(tenant)
    ids: dict[str, str] = {}

    def new_id(old: str) -> str:
        if old not in ids:
            ids[old] = derived_id(old, tenant)
        return ids[old]

    def props_of(row: Row) -> dict[str, Any]:
        props = dict(row.props)
        if "tenant_id" in props:
            props["tenant_id"] = tenant
        for name in ("scope_key", "writer_key"):
            if name in props:
                props[name] = key
        for name in row.ids:
            props[name] = new_id(props[name])
        for name in row.id_lists:
            props[name] = [new_id(v) for v in props[name]]
        for name in row.vectors:
            props[name] = noisy(props[name], rng)
        return props

    nodes = [{"labels": r.labels, "props": props_of(r)} for r in template.nodes]
    relationships = [
        {"a": r.ends[0], "b": r.ends[1], "type": r.type, "props": props_of(r)}
        for r in template.relationships
    ]
    return nodes, relationships


def noisy(vector: Sequence[float], rng: np.random.Generator) -> list[float]:
    """``vector`` plus Gaussian noise of norm about ``NOISE``, normalised again."""
    v = np.asarray(vector) + rng.standard_normal(len(vector)) * (NOISE / np.sqrt(len(vector)))
    out: list[float] = (v / np.linalg.norm(v)).tolist()
    return out


def shift(rows: list[dict[str, Any]], by: int) -> list[dict[str, Any]]:
    """Relationship rows with their node positions moved by ``by`` (copies batched)."""
    return [{**r, "a": r["a"] + by, "b": r["b"] + by} for r in rows] if by else rows


async def read_template(driver: AsyncDriver, tenant: str, dimensions: int) -> Template:
    """Every node and relationship of the tenant's USER scope, as they are."""
    key = key_of(tenant)
    labels = [r["label"] for r in (await driver.execute_query(READ_LABELS))[0]]
    labels = [label for label in labels if label not in SKIPPED_LABELS]
    position: dict[str, int] = {}
    nodes: list[Row] = []
    for label in labels:
        for rec in (await driver.execute_query(READ_NODES, label=label, key=key))[0]:
            if rec["id"] in position:  # a node with several labels: read once
                continue
            row = classify(rec["props"], tenant, dimensions)
            row.labels = list(rec["labels"])
            position[rec["id"]] = len(nodes)
            nodes.append(row)
    relationships: list[Row] = []
    seen: set[str] = set()
    for label in labels:
        for rec in (await driver.execute_query(READ_RELATIONSHIPS, label=label, key=key))[0]:
            if rec["id"] in seen:  # from a node with several labels: read once
                continue
            seen.add(rec["id"])
            if rec["b_key"] != key or rec["b"] not in position:
                raise ValueError(f"a {rec['type']} relationship leaves the template's scope")
            row = classify(rec["props"], tenant, dimensions)
            row.type = rec["type"]
            row.ends = (position[rec["a"]], position[rec["b"]])
            relationships.append(row)
    if not nodes:
        raise ValueError(f"template tenant {tenant} holds nothing")
    return Template(tenant, nodes, relationships, dimensions)


async def write_copies(
    driver: AsyncDriver, template: Template, tenants: Sequence[str], seed: str
) -> int:
    """Write one copy of ``template`` per tenant in one transaction; the rows written."""
    nodes: list[dict[str, Any]] = []
    relationships: list[dict[str, Any]] = []
    for tenant in tenants:
        rng = np.random.default_rng(
            int.from_bytes(hashlib.sha256(f"{seed}/{tenant}".encode()).digest()[:8], "big")
        )
        n, r = copy_rows(template, tenant, rng)
        relationships += shift(r, len(nodes))
        nodes += n
    try:
        # No bookmarks: copies are independent, and waiting for each other's would
        # serialise the loaders.
        await driver.execute_query(
            WRITE_COPY, nodes=nodes, relationships=relationships, bookmark_manager_=None
        )
    except ConstraintError:
        # A retried transaction whose first attempt committed (the connection dropped
        # before the answer came): the copies are there, which is all a copy promises.
        if await present(driver, tenants) != set(tenants):
            raise
    return len(nodes) + len(relationships)


async def present(driver: AsyncDriver, tenants: Sequence[str]) -> set[str]:
    """The tenants (of ``tenants``) whose scope exists."""
    by_key = {key_of(t): t for t in tenants}
    records = (await driver.execute_query(PRESENT_SCOPES, keys=list(by_key)))[0]
    return {by_key[r["key"]] for r in records}
