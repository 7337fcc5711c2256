"""Typed results from GraphQL and back: one dataclass gives both its selection set and its
decoder, so what the client asks for and what it reads can never drift apart.

A result type is a frozen dataclass whose fields are the GraphQL type's fields in snake_case;
``selection`` turns it into a selection set, ``decode`` turns the answer into instances
(``datetime`` and ``date`` from ISO strings, enums by value, ``Any`` as JSON). ``encode``
turns arguments into variables: input dataclasses become objects in camelCase without their
unset fields, so the server's defaults apply; anything else (a note's JSON value) is sent
exactly as given.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import types
import typing
from collections.abc import Mapping
from datetime import date, datetime
from enum import Enum
from typing import Any, Generic, Literal, TypeVar

T = TypeVar("T")


def camel(name: str) -> str:
    head, *rest = name.rstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@functools.cache
def hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _inner(tp: Any) -> Any:
    """The element type under ``X | None`` and ``list[X]`` (what a selection recurses into)."""
    while True:
        origin = typing.get_origin(tp)
        if origin in (types.UnionType, typing.Union):
            tp = next(a for a in typing.get_args(tp) if a is not type(None))
        elif origin is list:
            tp = typing.get_args(tp)[0]
        else:
            return tp


def _is_result(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


@functools.cache
def selection(cls: type) -> str:
    """``{ a b { c } }`` for a result dataclass."""
    parts = []
    for f in dataclasses.fields(cls):
        inner = _inner(hints(cls)[f.name])
        sub = " " + selection(inner) if _is_result(inner) else ""
        parts.append(camel(f.name) + sub)
    return "{ " + " ".join(parts) + " }"


def decode(tp: Any, value: Any) -> Any:
    """``value`` from the wire as ``tp``."""
    if value is None or tp is Any:
        return value
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        return decode(_first(tp), value)
    if origin is list:
        (item,) = typing.get_args(tp)
        return [decode(item, v) for v in value]
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        found = hints(tp)
        fields = dataclasses.fields(tp)
        return tp(**{f.name: decode(found[f.name], value.get(camel(f.name))) for f in fields})
    if tp is datetime:
        return datetime.fromisoformat(value)
    if tp is date:
        return date.fromisoformat(value)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return tp(value)
    if tp is float:
        return float(value)
    return value


def _first(tp: Any) -> Any:
    return next(a for a in typing.get_args(tp) if a is not type(None))


def encode(value: Any) -> Any:
    """An argument as a GraphQL variable."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            camel(f.name): encode(v)
            for f in dataclasses.fields(value)
            if (v := getattr(value, f.name)) is not None
        }
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, date):  # a datetime is a date too
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [encode(v) for v in value]
    return value


# Where a result named by text is looked up, in this order, so an operation imports only the
# modules up to its result's: the notes' types, then the rest (``results`` re-exports the
# notes', admin and erasure types), then recall's, facts' and entities'.
RESULT_MODULES = (
    "palimpsest.client.note_results",
    "palimpsest.client.results",
    "palimpsest.client.recall_results",
)
_BUILTINS: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "Any": Any}


@functools.cache
def result_type(text: str) -> Any:
    """The type a result's text names: ``"MemoryEntry | None"``, ``"list[Fact]"``, ``"str"``.
    Only the module that defines the name is imported, so a command that runs one operation
    does not build the client's other result dataclasses (most of its import time)."""
    text = text.strip()
    if text.endswith("| None"):
        return result_type(text.removesuffix("| None")) | None
    if text.startswith("list[") and text.endswith("]"):
        return list[result_type(text[5:-1])]  # type: ignore[misc]
    if text in _BUILTINS:
        return _BUILTINS[text]
    for name in RESULT_MODULES:
        found = vars(importlib.import_module(name)).get(text)
        if isinstance(found, type):
            return found
    raise LookupError(f"no client result type {text!r} in {', '.join(RESULT_MODULES)}")


class Operation(Generic[T]):
    """One root field: its kind, its arguments as the schema declares them
    (``"scope: Scope!, key: String!"``) and its result type. Only the arguments a call gives
    are sent; the server's defaults do the rest.

    The result may be given as a type or as its text (``"MemoryEntry | None"``, looked up in
    ``RESULT_MODULES`` on first use): ``operations`` names its results by text, so importing it
    builds none of them. ``result`` is the type either way."""

    __slots__ = ("__orig_class__", "_given", "field", "kind", "signature")

    kind: Literal["query", "mutation"]
    field: str
    signature: str
    _given: Any  # the result as given: a type, or its text

    def __init__(
        self, kind: Literal["query", "mutation"], field: str, signature: str, result: Any
    ) -> None:
        for name, value in (("kind", kind), ("field", field), ("signature", signature)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_given", result)

    def __setattr__(self, name: str, value: Any) -> None:
        if name != "__orig_class__":  # set by ``Operation[T](...)``
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def _key(self) -> tuple[str, str, str, Any]:
        return (self.kind, self.field, self.signature, self._given)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Operation) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"Operation(kind={self.kind!r}, field={self.field!r}, "
            f"signature={self.signature!r}, result={self._given!r})"
        )

    @property
    def result(self) -> Any:
        given = self._given
        return result_type(given) if isinstance(given, str) else given

    @property
    def args(self) -> dict[str, str]:
        pairs = (a.split(": ", 1) for a in self.signature.split(", ") if a)
        return dict(pairs)

    def request(self, given: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
        """The document and variables of a call; arguments given as None are left out."""
        args = self.args
        unknown = set(given) - set(args)
        if unknown:
            raise TypeError(f"{self.field}: unknown arguments {sorted(unknown)}")
        names = [n for n in args if given.get(n) is not None]
        head = f"{self.kind} {self.field[:1].upper()}{self.field[1:]}"
        if names:
            head += "(" + ", ".join(f"${n}: {args[n]}" for n in names) + ")"
        call = self.field
        if names:
            call += "(" + ", ".join(f"{n}: ${n}" for n in names) + ")"
        inner = _inner(self.result)
        if _is_result(inner):
            call += " " + selection(inner)
        return f"{head} {{ {call} }}", {n: encode(given[n]) for n in names}

    def read(self, data: Mapping[str, Any]) -> T:
        return typing.cast(T, decode(self.result, data.get(self.field)))
