"""What one call of a root field costs at worst, declared on the field itself.

A field says ``metadata=costs(EMBEDS)`` (or another spec) in its decorator; the edge limits
(``limits.cost``) read the spec from the field's definition in the schema, so a new field that
embeds or searches brings its cost with it instead of joining a list of names elsewhere.
A spec reads the call's arguments (``arg``), which may be ``UNKNOWN`` before coercion.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLField

COST_KEY = "palimpsest.cost"
UNKNOWN: Any = object()  # an argument whose value cannot be known before coercion
ALL_SOURCES = 3  # facts, notes, documents
ALL_SCOPES = 4  # AGENT, USER, TENANT, GLOBAL
Arg = Callable[[str], Any]


class FieldCost:
    """(embedding calls, vector/full-text index calls) of one call, at worst."""

    def of(self, arg: Arg) -> tuple[int, int]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Embeds(FieldCost):
    """One embedding call (an import, a fact batch, a chunk edit, a reducer that re-embeds)."""

    def of(self, arg: Arg) -> tuple[int, int]:
        return 1, 0


@dataclass(frozen=True, slots=True)
class EmbedsWhen(FieldCost):
    """One embedding call when the boolean argument ``flag`` may be true."""

    flag: str

    def of(self, arg: Arg) -> tuple[int, int]:
        value = arg(self.flag)
        return (0 if value is None or value is False else 1), 0


@dataclass(frozen=True, slots=True)
class Searches(FieldCost):
    """``recall``/``search``: one embedding, and a vector and a full-text leg per source and
    per distinct scope (``scope`` plus ``alsoScopes``); ``sources`` defaults to ``default``."""

    default_sources: int

    def of(self, arg: Arg) -> tuple[int, int]:
        sources = _distinct(arg("sources"), self.default_sources, ALL_SOURCES)
        scope, also = arg("scope"), arg("alsoScopes")
        known = UNKNOWN if scope is UNKNOWN or also is UNKNOWN else [scope, *_as_list(also)]
        return 1, 2 * sources * _distinct(known, 1, ALL_SCOPES)


@dataclass(frozen=True, slots=True)
class GraphSearch(FieldCost):
    """``graphRecall``: with a non-blank ``query``, one embedding and one fact-index search."""

    def of(self, arg: Arg) -> tuple[int, int]:
        query = arg("query")
        searches = 0 if query is None or (isinstance(query, str) and not query.strip()) else 1
        return searches, searches


@dataclass(frozen=True, slots=True)
class Scans(FieldCost):
    """A read of a whole scope's entities (``entityDuplicates``): one index call."""

    def of(self, arg: Arg) -> tuple[int, int]:
        return 0, 1


EMBEDS = Embeds()


def costs(spec: FieldCost) -> dict[str, Any]:
    """The ``metadata`` a field declares its cost with."""
    return {COST_KEY: spec}


def cost_of(field: GraphQLField | None) -> FieldCost | None:
    definition = field.extensions.get("strawberry-definition") if field else None
    spec = getattr(definition, "metadata", {}).get(COST_KEY) if definition else None
    return spec if isinstance(spec, FieldCost) else None


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]  # GraphQL lifts one value to a list


def _distinct(value: Any, default: int, worst: int) -> int:
    if value is None:
        return default
    if value is UNKNOWN:
        return worst
    items = _as_list(value)
    if not all(isinstance(v, str) for v in items):
        return worst  # coercion will refuse it; count the worst meanwhile
    return max(1, min(len(set(items)), worst))
