"""The client knows the schema exactly: every type, field, argument and root field the server
has, with the same types and nullability. A field added to the schema fails here until the
client's dataclass (or operation) has it; the message prints the declaration to add."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLScalarType,
    GraphQLSchema,
    parse,
    validate,
)
from graphql.pyutils import Undefined

from palimpsest.client import enums, inputs, operations, recall_results, results
from palimpsest.client.wire import Operation, result_type
from palimpsest.graphql.schema import build_schema

SCALARS = {
    "String": "str",
    "ID": "str",
    "Int": "int",
    "Float": "float",
    "Boolean": "bool",
    "Date": "date",
    "DateTime": "datetime",
    "Instant": "datetime | str",
    "JSON": "Any",
    "Int64": "int",
}
ROOTS = ("Query", "Mutation")


@pytest.fixture(scope="module")
def schema() -> GraphQLSchema:
    return build_schema()._schema


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


def py(t: Any, nullable: bool = True) -> str:
    """The annotation the client writes for a GraphQL type."""
    if isinstance(t, GraphQLNonNull):
        return py(t.of_type, nullable=False)
    if isinstance(t, GraphQLList):
        text = f"list[{py(t.of_type)}]"
    elif isinstance(t, GraphQLScalarType):
        text = SCALARS[t.name]
    else:
        text = t.name
    return text if not nullable or text == "Any" else text + " | None"


def field_name(name: str) -> str:
    python = snake(name)
    return python + "_" if python in ("from", "in", "is") else python


def expected(t: GraphQLObjectType | GraphQLInputObjectType) -> dict[str, str]:
    out = {}
    for name, f in t.fields.items():
        kind = py(f.type)
        if isinstance(t, GraphQLInputObjectType) and not (
            isinstance(f.type, GraphQLNonNull) and f.default_value is Undefined
        ):
            kind = kind if kind.endswith("| None") or kind == "Any" else kind + " | None"
        out[field_name(name)] = kind
    return out


def client_class(name: str) -> Any:
    for module in (results, recall_results, inputs, enums):
        if name in vars(module):
            return vars(module)[name]
    return None


def named_types(schema: GraphQLSchema) -> list[Any]:
    return [
        t
        for name, t in sorted(schema.type_map.items())
        if not name.startswith("__") and name not in ROOTS and not isinstance(t, GraphQLScalarType)
    ]


def test_every_schema_type_is_a_client_class_with_the_same_fields(schema: GraphQLSchema) -> None:
    problems = []
    for t in named_types(schema):
        cls = client_class(t.name)
        if isinstance(t, GraphQLEnumType):
            values = None if cls is None else {m.value for m in cls}
            if values != set(t.values):
                problems.append(f"enum {t.name}: client {values}, schema {set(t.values)}")
            continue
        want = expected(t)
        have = None if cls is None else dict(cls.__annotations__)
        if have != want:
            lines = "\n".join(f"    {k}: {v}" for k, v in want.items())
            problems.append(f"class {t.name} (in palimpsest/client/) should read:\n{lines}")
    assert problems == [], "\n".join(problems)


def test_result_and_input_classes_are_frozen(schema: GraphQLSchema) -> None:
    for t in named_types(schema):
        cls = client_class(t.name)
        if not isinstance(t, GraphQLEnumType):
            assert dataclasses.is_dataclass(cls)
            assert getattr(cls, "__dataclass_params__").frozen, t.name  # noqa: B009


def client_operations() -> dict[str, Operation[Any]]:
    return {o.field: o for o in vars(operations).values() if isinstance(o, Operation)}


def test_every_root_field_is_an_operation_with_its_arguments_and_type(
    schema: GraphQLSchema,
) -> None:
    ops = client_operations()
    problems = []
    for root in ROOTS:
        root_type = schema.type_map[root]
        assert isinstance(root_type, GraphQLObjectType)
        for name, f in root_type.fields.items():
            args = ", ".join(f"{a}: {d.type}" for a, d in f.args.items())
            result = py(f.type)
            constant = snake(name).upper()
            want = f'{constant}: Operation[{result}] = Operation("{root.lower()}", '
            want += f'"{name}", "{args}", "{result}")'
            o = ops.pop(name, None)
            if (
                o is None
                or o.kind != root.lower()
                or o.signature != args
                or o.result != result_type(result)
                # What mypy reads: the constant's annotation names the same result.
                or vars(operations)["__annotations__"].get(constant) != f"Operation[{result}]"
            ):
                problems.append(f"operations.py should have {want}")
    problems += [f"operations.py has {name}, which the schema no longer has" for name in ops]
    assert problems == [], "\n".join(problems)


@pytest.mark.parametrize("name", sorted(client_operations()))
def test_each_operation_document_is_valid_with_every_argument(
    schema: GraphQLSchema, name: str
) -> None:
    operation = client_operations()[name]
    document, _ = operation.request(dict.fromkeys(operation.args, 1))
    assert validate(schema, parse(document)) == []


def test_a_field_the_client_lacks_fails_the_check(schema: GraphQLSchema) -> None:
    """The check itself: a schema with one more field differs from the client's class."""
    t = schema.type_map["MemoryEntry"]
    assert isinstance(t, GraphQLObjectType)
    grown = {**expected(t), "colour": "str"}
    assert grown != dict(results.MemoryEntry.__annotations__)
