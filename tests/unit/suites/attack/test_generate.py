"""The attack generator on the real schema, without a server: every field gets a document
that validates, with every required argument filled, and ids come from the chooser."""

from __future__ import annotations

import random

from graphql import GraphQLNonNull, parse, validate

from palimpsest.graphql.schema import build_schema
from palimpsest.identity import Scope
from palimpsest_suites.attack.generate import Values, fields_of, id_kind_of
from palimpsest_suites.attack.matrix import ROLES, Member, Plane

SCHEMA = build_schema()._schema


def test_every_root_field_gets_a_valid_document_with_its_required_arguments() -> None:
    fields = fields_of(SCHEMA)
    assert SCHEMA.query_type is not None
    assert SCHEMA.mutation_type is not None
    roots = set(SCHEMA.query_type.fields) | set(SCHEMA.mutation_type.fields)
    assert {f.name for f in fields} == roots
    asked: list[str] = []

    def pick(kind: str) -> str:
        asked.append(kind)
        return "x" * 32

    for f in fields:
        for seed in range(5):
            values = Values(random.Random(seed))
            variables = values.variables(f, "USER", pick)
            required = {a for a, t in f.args.items() if isinstance(t, GraphQLNonNull)}
            assert required <= set(variables), f.name
            assert validate(SCHEMA, parse(f.document(list(variables)))) == [], f.name
    assert {"document", "chunk", "fact", "entity", "key", "sql"} <= set(asked)


def test_id_kinds_follow_field_and_argument_names() -> None:
    assert id_kind_of("document", "id") == "document"
    assert id_kind_of("updateChunk", "id") == "chunk"
    assert id_kind_of("supersedeFact", "byid") == "fact"
    assert id_kind_of("sqlErase", "id") == "sql"
    assert id_kind_of("assertFacts", "chunkid") == "chunk"
    assert id_kind_of("graphRecall", "seedids") == "entity"
    assert id_kind_of("memory", "key") == "key"
    assert id_kind_of("recall", "query") is None


def test_the_reach_model_keeps_global_for_operators_and_needs_owners() -> None:
    by_role = {w.role: Member("acme", w) for w in ROLES}
    assert "GLOBAL" not in by_role["admin"].reach(Plane.MEMORY)
    assert "GLOBAL" in by_role["operator"].reach(Plane.MEMORY)
    assert by_role["tokenonly"].reach(Plane.MEMORY) == {"TENANT"}
    assert by_role["isolated"].reach(Plane.MEMORY) == {"AGENT", "USER"}
    # Same agent name in one tenant: one AGENT scope.
    assert by_role["agentonly"].identity(Scope.AGENT) == by_role["member"].identity(Scope.AGENT)
