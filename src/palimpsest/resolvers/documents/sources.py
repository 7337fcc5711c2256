"""Withdrawing a fact's sources: a fact goes only with its last source (docs/spec.md, Erasure
and export).

A source is a ``:Source`` node in the fact's scope naming the chunk scope it quotes
(``origin_key``). Deleting a document withdraws that document's sources; erasing a user
withdraws every source quoting the user's scope. Facts left without any source are deleted,
and so are entities left with no fact and no mention. Facts that never had a source are not
touched here: they belong to their writer (see ``erasure``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from palimpsest.config import Settings
from palimpsest.cypher import entities as eq
from palimpsest.cypher import facts as q
from palimpsest.cypher.driver.executor import ScopedTx
from palimpsest.domain.ranking.fulltext import StatsDelta
from palimpsest.errors import Forbidden
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers import term_index


@dataclass(frozen=True, slots=True)
class Withdrawn:
    sources: int = 0
    facts: int = 0
    entities: int = 0

    def __add__(self, other: Withdrawn) -> Withdrawn:
        return Withdrawn(
            self.sources + other.sources,
            self.facts + other.facts,
            self.entities + other.entities,
        )


async def withdraw_batch(
    tx: ScopedTx, settings: Settings, origin_key: str, document_id: str | None, batch: int
) -> Withdrawn:
    """Withdraw up to ``batch`` sources from the facts of ``tx``'s scope, and what they leave
    unsupported."""
    [row] = await tx.run(
        q.REMOVE_SOURCES, {"origin_key": origin_key, "document_id": document_id, "batch": batch}
    )
    if not row["sources"]:
        return Withdrawn()
    return Withdrawn(int(row["sources"])) + await drop_unsourced(tx, settings, row["fact_ids"])


async def drop_unsourced(tx: ScopedTx, settings: Settings, fact_ids: list[str]) -> Withdrawn:
    """Of ``fact_ids``, delete those left without a source, then their orphaned entities."""
    [dropped] = await tx.run(q.DROP_UNSOURCED_FACTS, {"fact_ids": fact_ids})
    return Withdrawn(facts=int(dropped["facts"])) + await forget_facts(tx, settings, dropped)


async def forget_facts(tx: ScopedTx, settings: Settings, dropped: dict[str, Any]) -> Withdrawn:
    """After facts were deleted (``dropped``: their ``entity_ids`` ends and ``indexed``
    term fields): their ends left with nothing, and their terms in the scope's statistics."""
    entities = 0
    if dropped["entity_ids"]:
        [row] = await tx.run(eq.DROP_ORPHAN_ENTITIES, {"ids": dropped["entity_ids"]})
        entities = int(row["entities"])
    await forget_terms(tx, settings, "fact", term_index.removed(dropped["indexed"]))
    return Withdrawn(entities=entities)


async def forget_terms(tx: ScopedTx, settings: Settings, kind: str, delta: StatsDelta) -> None:
    """Take deleted rows out of the scope's term statistics, and drop the terms that no row
    of the scope holds any more, so no count keeps a deleted word."""
    await term_index.apply(tx, settings, kind, delta)


async def withdraw_all(
    tx: ScopedTx, settings: Settings, origin_key: str, document_id: str | None, batch: int = 1000
) -> Withdrawn:
    """Withdraw every matching source inside one transaction (a document's are few)."""
    total = Withdrawn()
    while True:
        step = await withdraw_batch(tx, settings, origin_key, document_id, batch)
        total += step
        if step.sources < batch:
            return total


def holder_scopes(who: Principal, home: ScopeRef) -> list[ScopeRef]:
    """``home`` and every other scope the caller writes that placement could have moved a
    fact into (its agent, user and tenant scopes), where a quote of ``home`` may live."""
    refs = [home]
    for scope in (Scope.AGENT, Scope.USER, Scope.TENANT):
        try:
            ref = resolve_scope(who, scope)
        except Forbidden:
            continue
        if ref.scope_key != home.scope_key:
            refs.append(ref)
    return refs
