"""The warm-up's drive on the real Neo4j: a round reads the rows it wrote, and keeps none."""

from __future__ import annotations

import dataclasses

from palimpsest.cypher.driver.executor import Database, Neo4jExecutor, OneTransaction
from palimpsest.domain.ranking.fusion import Source
from palimpsest.resolvers.recall import asks as recall_asks
from palimpsest.resolvers.services import Services
from palimpsest.warmup import QUESTION, drive_round, warm_principal


async def test_a_round_reads_the_rows_it_wrote_and_keeps_none(svc: Services) -> None:
    executor = svc.db.executor
    assert isinstance(executor, Neo4jExecutor)
    who = warm_principal()
    ask = recall_asks.Ask(query=QUESTION, top_k=10)
    async with OneTransaction(executor) as one:
        inside = dataclasses.replace(svc, db=Database(one))
        await drive_round(inside, who)
        seen = await recall_asks.search(inside, who, ask)
        # Its reads run on a scope that looks used: notes, a document's chunks and facts.
        assert {hit.kind for hit in seen.hits} == set(Source), seen.hits
    assert (await recall_asks.search(svc, who, ask)).hits == []
