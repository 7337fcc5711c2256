"""The full-text leg's covering read on the real Neo4j: Lucene answers its nested queries (rows
holding every term; then rows holding a set of terms, less those already read) as the leg
expects, and the leg finds exactly the pool of the rarest-terms-first read, reading fewer rows.

The scope's notes are laid out so that the covering read takes both steps: 30 notes hold the
three query terms twice each (they set the threshold), 20 short notes hold two rare terms
three times each (they rank first, and only the second step reads them), and 150 notes each
hold one term among other words (they cannot reach the pool, and are never read)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

import pytest

from palimpsest import fulltext
from palimpsest import recall as pure
from palimpsest.cypher.executor import Row, ScopedTx, Statement
from palimpsest.identity import Scope, ScopeRef, resolve_scope
from palimpsest.recall import Source
from palimpsest.resolvers import facts
from palimpsest.resolvers import memory as notes
from palimpsest.resolvers import recall_legs as legs
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal

pytestmark = pytest.mark.integration

Found = tuple[list[str], dict[str, float], set[str], list[int]]
QUERY = "heron lantern quarry"
FILLER = "the old mill stood by the river under grey skies all year long"


class Counted(ScopedTx):
    """A scoped handle that counts the rows each full-text read answers."""

    def __init__(self, tx: ScopedTx) -> None:
        super().__init__(tx.run, tx.ref)  # never called: ``run`` goes to ``tx`` itself
        self.tx, self.reads = tx, list[int]()

    async def run(self, statement: Statement, params: Mapping[str, Any] | None = None) -> list[Row]:
        rows = await self.tx.run(statement, params)
        if statement.name == "TERMS_MEMORY":
            self.reads.append(len(rows[0]["ids"]))
        return rows


async def leg(svc: Services, ref: ScopeRef, cover_min_rows: int) -> Found:
    """The notes leg's pool, scores, dropped rows and the rows of each full-text read."""
    terms = fulltext.query_terms(QUERY, True)
    levers = pure.Levers.of(svc.settings)
    base = {"prefix": "", "now": svc.clock(), **facts.time_view(svc, None, None).params()}

    async def work(tx: ScopedTx) -> Found:
        stats = await legs.read_stats(tx, [Source.NOTES], terms, False)
        counted = Counted(tx)
        r = await legs.fulltext_leg(
            counted,
            Source.NOTES,
            terms,
            stats.of(Source.NOTES),
            10,
            base,
            levers.k1,
            levers.b,
            cover_min_rows=cover_min_rows,
        )
        return r.ids, r.scores, r.dropped, counted.reads

    return await svc.db.scoped(ref).read_tx(work)


async def test_the_covering_read_finds_the_same_pool_reading_fewer_rows(svc: Services) -> None:
    who = principal(tenant_id=f"legs-{uuid.uuid4().hex[:8]}")
    texts = {f"all/{i}": "heron lantern quarry " * 2 + FILLER for i in range(30)}
    texts |= {f"pair/{i}": "heron lantern " * 3 for i in range(20)}
    texts |= {f"{w}/{i}": f"{w} {FILLER}" for w in ("heron", "lantern") for i in range(75)}
    texts |= {f"quarry/{i}": f"quarry {FILLER}" for i in range(400)}
    for key, text in texts.items():
        await notes.set_value(svc, who, Scope.USER, key, text, None, False, None)
    ref = resolve_scope(who, Scope.USER)
    on = await leg(svc, ref, 0)  # the covering read
    off = await leg(svc, ref, 10**9)  # the rarest-terms-first read alone
    assert on[:3] == off[:3]
    assert on[0] == sorted(f"pair/{i}" for i in range(20))[:10]  # ties by key
    assert on[3] == [30, 20]  # every term, then the pair less the rows read already
    assert off[3] == [30 + 20 + 75]  # the rarest term's rows
