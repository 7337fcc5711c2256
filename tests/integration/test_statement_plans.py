"""Every statement's plan on the real Neo4j: each scan or seek of scoped data is bounded by the
scope key, either inside the operator (an index seek on ``scope_key``, a filtered vector
search) or by a filter on ``<variable>.scope_key = $scope_key`` above it in the plan.

This reads what the planner will actually do, so a statement that mentions ``$scope_key``
somewhere harmless but scans a label unbounded still fails.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from neo4j import Driver

from palimpsest.cypher.driver.executor import Statement
from tests.unit.cypher.test_statements import SCOPED, all_statements

LEAF = re.compile(r"(Scan|Seek|IndexSearch|ByElementId|ById)")
# "UNIQUE d:Document(id)", "RANGE INDEX (s)-[f:FACT(scope_key)]->(o)", "SEARCH c IN (...)"
VARIABLE = re.compile(r"(?:\b(\w+):(?:" + "|".join(SCOPED) + r")\b)|(?:SEARCH (\w+) IN)")
BOUND_INSIDE = "scope_key = $scope_key"


def plan_of(driver: Driver, statement: Statement) -> dict[str, Any]:
    text = statement.text.strip()
    query = (
        text.replace("CYPHER 25", "CYPHER 25 EXPLAIN", 1)
        if text.startswith("CYPHER 25")
        else f"EXPLAIN {text}"
    )
    with driver.session() as session:
        summary = session.run(query).consume()
    assert summary.plan is not None, statement.name
    plan: dict[str, Any] = summary.plan
    return plan


def unbounded_leaves(plan: dict[str, Any], filters: tuple[str, ...] = ()) -> list[str]:
    """Leaf reads of scoped variables with no scope bound inside them or above them."""
    details = str(plan.get("args", {}).get("Details", ""))
    operator = str(plan["operatorType"]).split("@")[0]
    above = (*filters, details) if operator.startswith("Filter") else filters
    found: list[str] = []
    if LEAF.search(operator):
        for match in VARIABLE.finditer(details):
            var = match.group(1) or match.group(2)
            bounded = BOUND_INSIDE in details or any(
                re.search(rf"(cache\[)?{var}\.scope_key\]? = \$scope_key", f) for f in above
            )
            if not bounded:
                found.append(f"{operator}: {details[:120]}")
    children = plan.get("children", [])
    if operator == "Apply" and len(children) == 2:
        # An Apply yields only the rows its right side yields for each left row, so a filter
        # on the right side (over the left side's variables) bounds what the left side read.
        return unbounded_leaves(children[0], (*above, *filters_in(children[1]))) + (
            unbounded_leaves(children[1], above)
        )
    for child in children:
        found += unbounded_leaves(child, above)
    return found


def filters_in(plan: dict[str, Any]) -> tuple[str, ...]:
    own = str(plan.get("args", {}).get("Details", ""))
    mine = (own,) if str(plan["operatorType"]).startswith("Filter") else ()
    return mine + tuple(f for child in plan.get("children", []) for f in filters_in(child))


SCOPED_STATEMENTS = [s for _, s in all_statements() if s.scoped]


@pytest.fixture(autouse=True, scope="module")
def schema_applied(live_server_url: str) -> None:
    """Plans depend on the indexes, which the server's start-up makes (a fresh database)."""


@pytest.mark.parametrize("statement", SCOPED_STATEMENTS, ids=lambda s: s.name)
def test_every_scoped_read_is_bounded_by_the_scope_key(
    neo4j_driver: Driver, statement: Statement
) -> None:
    assert unbounded_leaves(plan_of(neo4j_driver, statement)) == []


def test_the_plan_check_catches_an_unbounded_scan(neo4j_driver: Driver) -> None:
    # The check itself must be able to fail: a label scan filtered on another property, and
    # a seek by id with no scope filter, are both reported.
    scan = Statement("PROBE_SCAN", "MATCH (m:Memory) WHERE m.key = $key RETURN m.key AS key")
    seek = Statement("PROBE_SEEK", "MATCH (d:Document {id: $id}) RETURN d.id AS id")
    bounded = Statement(
        "PROBE_BOUNDED",
        "MATCH (d:Document {id: $id}) WHERE d.scope_key = $scope_key RETURN d.id AS id",
    )
    assert unbounded_leaves(plan_of(neo4j_driver, scan))
    assert unbounded_leaves(plan_of(neo4j_driver, seek))
    assert unbounded_leaves(plan_of(neo4j_driver, bounded)) == []


SCAN = re.compile(
    r"^(NodeByLabelScan|AllNodesScan|\w*RelationshipTypeScan|\w*AllRelationshipsScan)"
)


def label_scans(plan: dict[str, Any]) -> list[str]:
    """Reads of a whole scoped label or relationship type: bounded by a filter, but their cost
    grows with every tenant's rows, not with the caller's scope."""
    operator = str(plan["operatorType"]).split("@")[0]
    details = str(plan.get("args", {}).get("Details", ""))
    found = (
        [f"{operator}: {details[:120]}"]
        if SCAN.match(operator) and (VARIABLE.search(details))
        else []
    )
    return found + [s for child in plan.get("children", []) for s in label_scans(child)]


@pytest.mark.parametrize("statement", SCOPED_STATEMENTS, ids=lambda s: s.name)
def test_every_scoped_read_seeks_an_index(neo4j_driver: Driver, statement: Statement) -> None:
    # A scope's query costs what the scope holds: one tenant's recall must not slow down as
    # other tenants grow (EXACT_MEMORY once scanned every Memory node of the database).
    assert label_scans(plan_of(neo4j_driver, statement)) == []


def test_the_scan_check_catches_a_label_scan(neo4j_driver: Driver) -> None:
    scan = Statement("PROBE_LABEL_SCAN", "MATCH (m:Memory) WHERE m.text = $t RETURN m.key AS key")
    seek = Statement(
        "PROBE_KEY_SEEK",
        "MATCH (c:Chunk {scope_key: $scope_key}) RETURN c.id AS id",
    )
    assert label_scans(plan_of(neo4j_driver, scan))
    assert label_scans(plan_of(neo4j_driver, seek)) == []


# Statements that read a few rows of a scope by key. With an index on ``scope_key`` alone the
# planner preferred it and filtered every row of the scope (READ_TERM_STATS read every term
# the scope had ever seen, and slowed as it grew); their hints pin the composite index.
BY_KEY = {
    "READ_TERM_STATS": ("s:TermStats", "TermStats(scope_key, kind, term)"),
    "LOAD_HITS": ("m:Memory", "Memory(scope_key, key)"),
    "CUES_MEMORY": ("m:Memory", "Memory(scope_key, key)"),
}


def seeks(plan: dict[str, Any]) -> list[str]:
    operator = str(plan["operatorType"]).split("@")[0]
    found = [str(plan.get("args", {}).get("Details", ""))] if "Seek" in operator else []
    return found + [s for child in plan.get("children", []) for s in seeks(child)]


@pytest.mark.parametrize("name", sorted(BY_KEY))
def test_reads_by_key_seek_the_composite_index(neo4j_driver: Driver, name: str) -> None:
    [statement] = [s for _, s in all_statements() if s.name == name]
    label, index = BY_KEY[name]
    reads = [d for d in seeks(plan_of(neo4j_driver, statement)) if label in d]
    assert reads
    assert all(index in d for d in reads), reads
