"""Operations from the live schema: every root field, a full selection, generated arguments.

Fields come from introspection, so a field added to the API is attacked without a change
here. Argument values come from the introspected types, guided by argument names: required
arguments always get a plausible value, optional ones sometimes; ids and keys come from an
``Ids`` chooser so the runner can ask for own, foreign or missing ones.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLScalarType,
    GraphQLSchema,
    get_nullable_type,
)

from palimpsest_suites.attack.plant import PHRASE

MAX_DEPTH = 4


@dataclass(frozen=True, slots=True)
class Field:
    operation: str  # query or mutation
    name: str
    args: dict[str, GraphQLInputType]
    selection: str

    @property
    def has_scope(self) -> bool:
        return "scope" in self.args

    def document(self, provided: list[str]) -> str:
        decl = ", ".join(f"${a}: {self.args[a]}" for a in provided)
        call = ", ".join(f"{a}: ${a}" for a in provided)
        head = f"{self.operation}({decl})" if decl else self.operation
        return f"{head} {{ {self.name}{f'({call})' if call else ''}{self.selection} }}"


def fields_of(schema: GraphQLSchema) -> list[Field]:
    found = []
    for operation, root in (("query", schema.query_type), ("mutation", schema.mutation_type)):
        if root is None:
            continue
        for name, f in root.fields.items():
            args = {a: arg.type for a, arg in f.args.items()}
            found.append(Field(operation, name, args, selection(f.type, 0)))
    return found


def selection(kind: GraphQLOutputType, depth: int) -> str:
    """Every leaf reachable without arguments, down to ``MAX_DEPTH`` object levels."""
    inner = _named(kind)
    if not isinstance(inner, GraphQLObjectType):
        return ""
    parts = []
    for name, f in inner.fields.items():
        if any(isinstance(a.type, GraphQLNonNull) for a in f.args.values()):
            continue
        if isinstance(_named(f.type), GraphQLObjectType):
            if depth + 1 < MAX_DEPTH:
                parts.append(name + selection(f.type, depth + 1))
        else:
            parts.append(name)
    return " { " + " ".join(parts) + " }" if parts else " { __typename }"


def _named(kind: GraphQLOutputType) -> GraphQLOutputType:
    while isinstance(kind, GraphQLNonNull | GraphQLList):
        kind = kind.of_type
    return kind


def fresh_id() -> str:
    return secrets.token_hex(16)


IdPicker = Callable[[str], str]  # kind -> id or key

DATES = ["2024-01-01", "2019", "2030-06-15T12:00:00Z", "2021-03"]
SQL_READ = [
    "SELECT role, body FROM vault",
    "SELECT name, sql FROM sqlite_master",
    "SELECT 1 AS one",
    "SELECT body FROM vault WHERE role = ?",
]
SQL_WRITE = [
    "CREATE TABLE IF NOT EXISTS scratch (x TEXT)",
    "INSERT INTO scratch (x) VALUES ('attack')",
    "INSERT INTO vault (role, body) VALUES ('attacker', 'noise')",
]
WORDS = ["vault", "person", "strongroom", "harbour", "gate", "attack"]


class Values:
    """Plausible values by type and argument name."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def variables(self, field: Field, scope: str | None, pick: IdPicker) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, kind in field.args.items():
            if name == "scope" and scope is not None:
                out[name] = scope
                continue
            required = isinstance(kind, GraphQLNonNull)
            if not required and self.rng.random() < 0.5:
                continue
            out[name] = self.value(kind, field, name, pick)
        return out

    def value(self, kind: GraphQLInputType, field: Field, name: str, pick: IdPicker) -> Any:
        kind = get_nullable_type(kind)  # type: ignore[assignment]
        rng = self.rng
        if isinstance(kind, GraphQLList):
            return [self.value(kind.of_type, field, name, pick) for _ in range(rng.randint(1, 2))]
        if isinstance(kind, GraphQLEnumType):
            return rng.choice(list(kind.values))
        if isinstance(kind, GraphQLInputObjectType):
            obj = {}
            for sub, f in kind.fields.items():
                if isinstance(f.type, GraphQLNonNull) or rng.random() < 0.5:
                    obj[sub] = self.value(f.type, field, sub, pick)
            return obj
        assert isinstance(kind, GraphQLScalarType)
        return self.scalar(kind.name, field, name, pick)

    def scalar(self, kind: str, field: Field, name: str, pick: IdPicker) -> Any:
        rng, lower = self.rng, name.lower()
        if kind == "Boolean":
            return rng.random() < (0.1 if lower == "embed" else 0.5)
        if kind == "Int":
            return self.integer(lower)
        if kind == "Float":
            return rng.choice([1.0, -2.5, 0.0])
        if kind == "Instant":
            return rng.choice(DATES)
        if kind == "JSON":
            if lower == "args":
                return rng.choice([[], ["vault"], {"r": "member"}, None])
            return rng.choice(["attack", 7, {"a": {"b": 1}}, [1, "x"], True])
        id_kind = id_kind_of(field.name, lower)
        if id_kind is not None:
            return pick(id_kind)
        return self.text(field, lower)

    def integer(self, name: str) -> int:
        table = {
            "limit": [1, 5, 50],
            "topk": [1, 5, 10],
            "hops": [0, 1, 2],
            "ttlseconds": [0, 60],
            "revision": [1, 2],
            "start": [0, 4],
            "end": [5, 12],
        }
        return self.rng.choice(table.get(name, [0, 1, 3]))

    def text(self, field: Field, name: str) -> str:
        rng = self.rng
        if name in ("asof", "knownat", "validat", "invalidat", "observedat", "from", "to"):
            return rng.choice(DATES)
        if name == "slack":
            return rng.choice(["72h", "3d", "10m"])
        if name == "statement":
            return rng.choice(SQL_WRITE if field.operation == "mutation" else SQL_READ)
        if name == "markdown":
            return f"# Attack\n\nsome {rng.choice(WORDS)} text\n\n- item one\n- item two\n"
        if name in ("query", "contains"):
            return rng.choice([PHRASE, "vault", "strongroom person"])
        if name in ("prefix", "pathprefix"):
            return rng.choice(["", "secret/", "/secret/", "scratch/"])
        if name == "after":
            return rng.choice(["", "secret/a", fresh_id()])
        if name in ("name", "subject", "type", "entitytype"):
            return rng.choice(WORDS)
        return f"{rng.choice(WORDS)} {rng.randint(0, 99)}"


def id_kind_of(field: str, arg: str) -> str | None:
    """Which pool an argument's value comes from: an id of a planted kind, or a memory key."""
    if arg == "chunkid":
        return "chunk"
    if arg == "seedids":
        return "entity"
    if arg == "key":
        return "key"
    if arg not in ("id", "byid"):
        return None
    name = field.lower()
    for part, kind in (("document", "document"), ("chunk", "chunk"), ("sql", "sql")):
        if part in name:
            return kind
    return "fact"
