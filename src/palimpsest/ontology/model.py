"""The tenant ontology as it is in force: its types and how a predicate reads for a type.

``from_markdown`` and ``from_data`` read one; ``build`` checks and resolves it (no I/O).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from palimpsest.domain.names import normalise
from palimpsest.identity.principal import Scope


class OntologyStatus(StrEnum):
    CONFIRMED = "confirmed"
    DRAFT = "draft"


@dataclass(frozen=True, slots=True)
class EntityType:
    name: str
    parent: str | None
    declared_scope: Scope | None
    # Effective scope: declared, else the nearest ancestor's (None: the type places nothing).
    scope: Scope | None
    aliases: frozenset[str]
    # Canonical predicates the type's subjects hold one value of at a time (own and inherited).
    single: frozenset[str] = frozenset()
    # (spelling, canonical predicate) for every declared alias, own and inherited.
    same: tuple[tuple[str, str], ...] = ()

    def canonical(self, predicate: str) -> str:
        """The predicate's canonical spelling (normalised; ``same:`` aliases resolved)."""
        key = normalise(predicate)
        return next((c for a, c in self.same if a == key), key)

    def single_valued(self, predicate: str) -> bool:
        return self.canonical(predicate) in self.single

    def spellings(self, predicate: str) -> frozenset[str]:
        """Every normalised spelling that names the same predicate as ``predicate``."""
        canonical = self.canonical(predicate)
        return frozenset({canonical, *(a for a, c in self.same if c == canonical)})


@dataclass(frozen=True)
class Ontology:
    status: OntologyStatus
    types: Mapping[str, EntityType]
    self_names: frozenset[str]
    # Every normalised type name and alias -> canonical type name.
    _lookup: Mapping[str, str] = field(repr=False)

    @property
    def confirmed(self) -> bool:
        return self.status is OntologyStatus.CONFIRMED

    def find(self, name: str | None) -> EntityType | None:
        """The type called ``name`` (or aliased so), case-insensitively; None if not in force."""
        if name is None:
            return None
        canonical = self._lookup.get(normalise(name))
        return None if canonical is None else self.types[canonical]

    def single_spellings(self, entity_type: str, predicate: str) -> frozenset[str] | None:
        """The spellings of ``predicate`` when a confirmed ontology declares it single-valued
        for subjects of ``entity_type``; None when it is many-valued (the default)."""
        etype = self.find(entity_type) if self.confirmed else None
        if etype is None or not etype.single_valued(predicate):
            return None
        return etype.spellings(predicate)
