"""The full-text leg's covering read on the real Neo4j: Lucene answers its nested queries (rows
holding every term; then rows holding a set of terms, less those already read) as the leg
expects, and the leg finds exactly the pool of the rarest-terms-first read, reading fewer rows.

The scope's notes are laid out so that the covering read takes both steps: 30 notes hold the
three query terms twice each (they set the threshold), 20 short notes hold two rare terms
three times each (they rank first, and only the second step reads them), and 550 notes each
hold one of the terms among other words (they cannot reach the pool, and are never read)."""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.ranking import fulltext
from palimpsest.domain.ranking import fusion as pure
from palimpsest.domain.ranking.fusion import Source
from palimpsest.identity import Scope, ScopeRef, resolve_scope
from palimpsest.resolvers import term_index
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.notes import keyvalue as notes
from palimpsest.resolvers.recall import legs
from palimpsest.resolvers.services import Services
from palimpsest.runtime import open_services
from tests.integration.conftest import Gql
from tests.unit.principals import principal

Found = tuple[list[str], dict[str, float], set[str], list[int]]
QUERY = "heron lantern quarry"
WORDS = ["heron", "lantern", "quarry", "saffron", "otter", "violet"]
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  summary { id } } }"""
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


async def test_the_statistics_keep_each_terms_peaks_and_older_ones_stay_loose(
    settings: Settings, neo4j_driver: Driver
) -> None:
    # One shard of statistics, so every write lands on the row this test looks at.
    async with open_services(settings.replace(fulltext_stats_shards=1)) as svc:
        await peaks_and_older_statistics(svc, neo4j_driver)


async def peaks_and_older_statistics(svc: Services, neo4j_driver: Driver) -> None:
    who = principal(tenant_id=f"peaks-{uuid.uuid4().hex[:8]}")
    ref = resolve_scope(who, Scope.USER)
    terms = ["cat", "dog", "fish"]

    async def peaks() -> Mapping[str, tuple[int, float]]:
        async def work(tx: ScopedTx) -> Mapping[str, tuple[int, float]]:
            return (await legs.read_stats(tx, [Source.NOTES], terms, False)).of(Source.NOTES).peaks

        return await svc.db.scoped(ref).read_tx(work)

    async def write(key: str, text: str) -> None:
        await notes.set_value(svc, who, Scope.USER, key, text, None, False, None)

    await write("one", "cat cat dog")
    await write("two", "cat dog dog dog fish")
    assert await peaks() == {"cat": (2, 2 / 3), "dog": (3, 3 / 5), "fish": (1, 1 / 5)}
    await notes.delete(svc, who, Scope.USER, "two")  # peaks only grow: still bounds
    await write("three", "dog cat cat cat")  # lower peaks change nothing
    assert (await peaks())["dog"] == (3, 3 / 5)
    assert (await peaks())["cat"] == (3, 3 / 4)
    # Statistics written before peaks were kept: that term keeps the loose bound, even after
    # rows are written to it again.
    # (Deleting "two" took fish's count to zero, which drops its statistics: write it again.)
    await write("five", "fish bird")
    neo4j_driver.execute_query(
        "MATCH (s:TermStats {scope_key: $key, term: 'fish'}) REMOVE s.bounded",
        key=ref.scope_key,
    )
    await write("four", "fish fish")
    assert set(await peaks()) == {"cat", "dog"}
    # An older shard of a term, beside a newer one: loose too.
    neo4j_driver.execute_query(
        "MATCH (s:TermStats {scope_key: $key, term: 'cat'}) "
        "CREATE (:TermStats {scope_key: s.scope_key, kind: s.kind, term: s.term, shard: -1, "
        "tenant_id: s.tenant_id, scope: s.scope, owner_id: s.owner_id, df: 0, len: 0})",
        key=ref.scope_key,
    )
    assert set(await peaks()) == {"dog"}


def paragraphs(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        words = rng.sample(WORDS, rng.randint(1, 4)) * rng.randint(1, 3)
        rng.shuffle(words)
        out.append(f"Paragraph {i} tells of the " + " and the ".join(words) + ".")
    return out


STRIP_PEAKS = """MATCH (s:TermStats {scope_key: $key})
REMOVE s.bounded, s.max_tf, s.max_ratio"""


async def test_statistics_written_before_peaks_get_them_from_their_rows(
    svc: Services, neo4j_driver: Driver, gql: Gql, token: Callable[..., str]
) -> None:
    who = principal(tenant_id=f"backfill-{uuid.uuid4().hex[:8]}")
    ref = resolve_scope(who, Scope.USER)
    kinds = [Source.NOTES, Source.DOCUMENTS]
    terms = fulltext.query_terms("heron lantern quarry saffron otter kestrel", True)

    async def peaks() -> dict[Source, Mapping[str, tuple[int, float]]]:
        async def work(tx: ScopedTx) -> dict[Source, Mapping[str, tuple[int, float]]]:
            stats = await legs.read_stats(tx, kinds, terms, False)
            return {k: stats.of(k).peaks for k in kinds}

        return await svc.db.scoped(ref).read_tx(work)

    for i, text in enumerate(paragraphs(3, 12)):
        await notes.set_value(svc, who, Scope.USER, f"n{i}", text, None, False, None)
    markdown = "\n\n".join(paragraphs(4, 20)) + "\n"
    body = gql(IMPORT, token(who.tenant_id, who.user_id, who.agent_name), m=markdown)
    assert "errors" not in body, body
    kept = await peaks()
    assert all(kept[k] for k in kinds)
    neo4j_driver.execute_query(STRIP_PEAKS, key=ref.scope_key)  # as written before peaks
    assert await peaks() == {k: {} for k in kinds}
    # A term first written after the upgrade has its peaks from the start.
    await notes.set_value(svc, who, Scope.USER, "late", "kestrel kestrel", None, False, None)
    assert await peaks() == {k: {} for k in kinds} | {Source.NOTES: {"kestrel": (2, 1.0)}}
    done = await term_index.backfill_peaks(svc.db.scoped(ref))
    assert set(done) == {"memory", "chunk"}
    assert await peaks() == {
        Source.NOTES: {**kept[Source.NOTES], "kestrel": (2, 1.0)},
        Source.DOCUMENTS: kept[Source.DOCUMENTS],
    }
    assert await term_index.backfill_peaks(svc.db.scoped(ref)) == {}  # nothing left to do
