"""Checking and resolving a read ontology: names, scopes, ``extends`` chains (no I/O).

Both readers (``from_markdown``, ``from_data``) collect ``RawType``s and hand them to ``build``,
so the two forms follow one set of rules and refuse the same mistakes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from palimpsest.domain.names import normalise
from palimpsest.errors import InvalidArgument
from palimpsest.identity.principal import Scope
from palimpsest.ontology import predicates
from palimpsest.ontology.model import EntityType, Ontology, OntologyStatus

MAX_TYPES = 500
MAX_NAME_CHARS = 100
MAX_SELF_NAMES = 24
SELF_SECTION = "self"

PLACEABLE = {"agent": Scope.AGENT, "user": Scope.USER, "tenant": Scope.TENANT}
_NO_SCOPE = "none"


@dataclass(slots=True, eq=False)  # identity semantics: compared with `in` when walking
class RawType:
    name: str
    where: str
    scope: str | None = None  # None: not declared, inherit
    parent: str | None = None
    aliases: list[tuple[str, str]] = field(default_factory=list)  # (alias, where)
    single: list[str] = field(default_factory=list)  # normalised predicates
    same: list[tuple[str, str, str]] = field(default_factory=list)  # (alias, canonical, where)
    seen: set[str] = field(default_factory=set)


def build(
    status: OntologyStatus, raw_types: list[RawType], raw_self: list[tuple[str, str]]
) -> Ontology:
    """The ontology a reader collected: types, aliases, parents, ``same:`` lines and self names
    checked (``InvalidArgument`` naming the line or field), ``extends`` resolved."""
    if len(raw_types) > MAX_TYPES:
        raise InvalidArgument(f"{len(raw_types)} types, over the {MAX_TYPES} limit")
    lookup: dict[str, str] = {}
    by_name: dict[str, RawType] = {}
    for raw in raw_types:
        if raw.name in lookup:
            raise InvalidArgument(f"{raw.where}: type {raw.name!r} is declared twice")
        lookup[raw.name] = raw.name
        by_name[raw.name] = raw
    for raw in raw_types:
        for alias, where in raw.aliases:
            key = check_name(alias, where)
            if key in lookup:
                raise InvalidArgument(f"{where}: alias {key!r} is already a type or alias")
            lookup[key] = raw.name
    for raw in raw_types:
        if raw.parent is not None:
            if raw.parent not in lookup:
                raise InvalidArgument(
                    f"{raw.where}: {raw.name!r} extends unknown type {raw.parent!r}"
                )
            raw.parent = lookup[raw.parent]
    for raw in raw_types:
        predicates.check_same(raw.same, raw.name)
    types = {raw.name: _resolve(raw, by_name) for raw in raw_types}
    self_names: set[str] = set()
    for name, where in raw_self:
        key = check_name(name, where)
        if len(key) < 2:
            raise InvalidArgument(f"{where}: self name {key!r} is shorter than 2 characters")
        self_names.add(key)
    if len(self_names) > MAX_SELF_NAMES:
        raise InvalidArgument(f"{len(self_names)} self names, over the {MAX_SELF_NAMES} limit")
    return Ontology(status, types, frozenset(self_names), lookup)


def _resolve(raw: RawType, by_name: Mapping[str, RawType]) -> EntityType:
    """Walk up ``extends`` (refusing cycles); the nearest declared scope is the effective one."""
    chain = [raw]
    while chain[-1].parent is not None:
        parent = by_name[chain[-1].parent]
        if parent in chain:
            names = [r.name for r in chain[chain.index(parent) :]]
            cycle = " -> ".join([*names, parent.name])
            raise InvalidArgument(f"{chain[-1].where}: extends forms a cycle: {cycle}")
        chain.append(parent)
    inherited = next((r.scope for r in chain if r.scope is not None), None)
    aliases = frozenset(normalise(a) for a, _ in raw.aliases)
    same: dict[str, str] = {}
    for r in reversed(chain):  # the nearest declaration wins
        same.update({a: c for a, c, _ in r.same})
    single = frozenset(same.get(p, p) for r in chain for p in r.single)
    return EntityType(
        raw.name,
        raw.parent,
        _scope(raw.scope),
        _scope(inherited),
        aliases,
        single,
        tuple(sorted(same.items())),
    )


def _scope(value: str | None) -> Scope | None:
    return None if value is None else PLACEABLE.get(value)


def check_key(key: str, allowed: Sequence[str], seen: set[str], where: str, place: str) -> None:
    if key not in allowed:
        hint = " (a document directive: put it above the first type)" if key == "status" else ""
        raise InvalidArgument(
            f"{where}: unknown directive {key!r} {place}{hint}; "
            f"expected one of: {', '.join(allowed)}"
        )
    if key in ("scope", "extends", "status"):
        if key in seen:
            raise InvalidArgument(f"{where}: {key!r} is given twice")
        seen.add(key)


def scope_value(value: str, where: str) -> None:
    if value == "global":
        raise InvalidArgument(
            f"{where}: scope global cannot be declared: it spans all tenants and is admin only; "
            "use tenant"
        )
    if value not in PLACEABLE and value != _NO_SCOPE:
        raise InvalidArgument(
            f"{where}: unknown scope {value!r}; expected one of: agent, user, tenant, none"
        )


def status_of(value: str | None, where: str) -> OntologyStatus:
    if value is None:
        return OntologyStatus.DRAFT
    word = first_word(value)
    try:
        return OntologyStatus(word)
    except ValueError:
        raise InvalidArgument(
            f"{where}: unknown status {value.strip()!r}; expected confirmed or draft"
        ) from None


def check_name(text: str, where: str) -> str:
    name = normalise(text)
    if not name:
        raise InvalidArgument(f"{where}: a name must not be empty")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidArgument(f"{where}: a name is longer than {MAX_NAME_CHARS} characters")
    return name


def first_word(value: str) -> str:
    words = value.split()
    return words[0].lower() if words else ""


def split(value: str) -> list[str]:
    return [part for part in (p.strip() for p in value.split(",")) if part]
