"""The GraphQL mappers field-tested against the domain types (issue 44, step 5): every output
type with an ``of(domain)`` mapper reads every field of its domain dataclass, or names the
field in ``HIDDEN`` with the reason it stays off the wire. A field added to a domain type and
not to GraphQL fails here, where it is decided, instead of going missing from the API.

A mapper reads a field when its source names ``<param>.<field>``, or hands the whole value to
``asdict`` (then the GraphQL type must have exactly the domain's fields, or its constructor
would fail).
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import pkgutil
import textwrap
import types
import typing
from dataclasses import dataclass

import pytest

import palimpsest.graphql

# (GraphQL type, domain field) -> why the field is not on the wire.
HIDDEN: dict[tuple[str, str], str] = {
    ("Document", "preamble"): "Markdown export's own: documentMarkdown renders it",
    ("Document", "separators"): "Markdown export's own: documentMarkdown renders them",
    ("RecallHit", "fulltext_score"): "shown per leg, as explain.legs[].value",
    ("RecallHit", "years"): "a ranking cue read from the row, not an answer",
    ("RecallHit", "has_time"): "a ranking cue read from the row, not an answer",
    ("RecallHit", "speaker"): "a ranking cue read from the row, not an answer",
    ("RecallHit", "dated"): "a ranking cue read from the row, not an answer",
    ("RecallHit", "time_ranges"): "shown where a boost read them, as explain.timeRanges",
    ("Me", "memory_scopes"): "memoryScopes is what the token reaches, resolved from it whole",
    ("Me", "sql_scopes"): "sqlScopes is what the token reaches, resolved from it whole",
    ("Me", "bulk_import"): "set by in-process operator tooling only, never by a token",
}


@dataclass(frozen=True)
class Mapper:
    graphql: type
    domain: type
    param: str
    source: ast.AST

    @property
    def name(self) -> str:
        return self.graphql.__name__

    def reads(self) -> set[str]:
        """The domain fields the mapper's source reads."""
        found: set[str] = set()
        for node in ast.walk(self.source):
            if isinstance(node, ast.Attribute) and _is(node.value, self.param):
                found.add(node.attr)
            if (
                isinstance(node, ast.Call)
                and _is(node.func, "asdict")
                and any(_is(a, self.param) for a in node.args)
            ):
                found |= {f.name for f in dataclasses.fields(self.domain)}
        return found


def _is(node: ast.AST, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _domain(annotation: object) -> type | None:
    """The dataclass a mapper's parameter is (``X | None`` unwrapped), else None."""
    options = [annotation]
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
    if len(options) == 1 and isinstance(options[0], type) and dataclasses.is_dataclass(options[0]):
        return options[0]
    return None


def mappers() -> list[Mapper]:
    """Every GraphQL type of ``palimpsest.graphql`` with an ``of`` from a domain dataclass."""
    found: list[Mapper] = []
    package = palimpsest.graphql
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for cls in vars(module).values():
            if not (
                inspect.isclass(cls)
                and cls.__module__ == module.__name__
                and hasattr(cls, "__strawberry_definition__")
                and isinstance(cls.__dict__.get("of"), classmethod)
            ):
                continue
            of = cls.__dict__["of"].__func__
            param = list(inspect.signature(of).parameters)[1]
            domain = _domain(typing.get_type_hints(of)[param])
            if domain is not None:
                source = ast.parse(textwrap.dedent(inspect.getsource(of)))
                found.append(Mapper(cls, domain, param, source))
    return found


MAPPERS = mappers()


def test_the_mappers_are_found() -> None:
    """The walk finds the mappers it means to hold (a broken walk would hold nothing)."""
    names = {m.name for m in MAPPERS}
    assert {"Fact", "Entity", "RecallHit", "Explain", "MemoryEntry", "Document", "Me"} <= names
    assert len(MAPPERS) >= 30


@pytest.mark.parametrize("mapper", MAPPERS, ids=lambda m: m.name)
def test_every_domain_field_is_mapped_or_hidden_by_name(mapper: Mapper) -> None:
    fields = [f.name for f in dataclasses.fields(mapper.domain)]
    hidden = {field for (name, field) in HIDDEN if name == mapper.name}
    unmapped = [f for f in fields if f not in mapper.reads() and f not in hidden]
    assert unmapped == [], (
        f"{mapper.domain.__qualname__}'s fields {unmapped} reach no field of GraphQL's "
        f"{mapper.name}: map them in its `of`, or list them in HIDDEN with the reason"
    )


def test_every_hidden_field_is_a_field_the_mapper_leaves_out() -> None:
    """No stale entry: each names a domain field that exists and is not read."""
    by_name = {m.name: m for m in MAPPERS}
    for (name, field), why in HIDDEN.items():
        assert why
        mapper = by_name[name]
        assert field in {f.name for f in dataclasses.fields(mapper.domain)}, (name, field)
        assert field not in mapper.reads(), (name, field)
