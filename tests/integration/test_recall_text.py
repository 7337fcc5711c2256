"""The text side in one statement per scope (``READ_TEXT_SIDE``, ``resolvers/recall/text.py``)
on the real Neo4j: for random small scopes of notes, document chunks and facts (some notes out
of the asked key prefix, some facts no longer valid), every hybrid and full-text search answers
exactly as the legs' own reads do (hits, order, scores, explanations and the time filter's
report), whether every kind's rows are held, some kinds' rows are too many to hold, or none
are; and when they are held, no full-text read, cue read or statistics read of its own runs."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, ScopedTx, Statement
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.notes import keyvalue as notes
from palimpsest.resolvers.recall import one as recall_one
from palimpsest.resolvers.recall import planner as rr
from palimpsest.resolvers.recall import text as recall_text
from palimpsest.resolvers.recall.hits import Hit, TimeFilterReport
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft
from tests.unit.principals import principal

WORDS = ["heron", "lantern", "quarry", "saffron", "otter", "violet", "maple", "cobalt", "ember"]
OLD_READS = {
    "READ_TERM_STATS",
    "TERMS_MEMORY",
    "TERMS_CHUNKS",
    "TERMS_FACTS",
    "CUES_MEMORY",
    "CUES_CHUNKS",
    "CUES_FACTS",
}
FULL = recall_text.HELD_MAX_ROWS
Answer = tuple[list[Hit], TimeFilterReport | None]


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8)))


async def _scope(svc: Services, rng: random.Random) -> Principal:
    who = principal(tenant_id=f"text-{uuid.uuid4().hex[:8]}")
    for i in range(rng.randint(5, 30)):
        key = f"{rng.choice(['a', 'b'])}/{i}"
        await notes.set_value(svc, who, Scope.USER, key, _text(rng), None, False, None)
    paragraphs = "\n\n".join(_text(rng) + "." for _ in range(rng.randint(3, 25)))
    await importer.import_document(svc, who, Scope.USER, paragraphs, "doc", None, None)
    past = datetime.now(UTC) - timedelta(days=30)
    drafts = [
        FactDraft(
            EntityRef("Person", f"p{i}"),
            "knows",
            EntityRef("Person", f"q{i}"),
            None,
            text=_text(rng),
            invalid_at=past if rng.random() < 0.3 else None,
        )
        for i in range(rng.randint(2, 12))
    ]
    await facts.assert_facts(svc, who, Scope.USER, drafts)
    return who


async def _answer(svc: Services, who: Principal, query: str, mode: rr.Mode, prefix: str) -> Answer:
    req = rr.RecallRequest(
        query=query,
        top_k=8,
        sources=frozenset(pure.Source),
        view=facts.time_view(svc, None, None),
        levers=pure.Levers.of(svc.settings),
        mode=mode,
        prefix=prefix,
    )
    result = await rr.recall(svc, who, [Scope.USER], req)
    return result.hits, result.time_filter


async def test_the_text_side_in_one_statement_answers_as_the_legs_own_reads(
    svc: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    ran: Counter[str] = Counter()
    real_run = ScopedTx.run

    async def counted(
        self: ScopedTx, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        ran[statement.name] += 1
        return await real_run(self, statement, params)

    monkeypatch.setattr(ScopedTx, "run", counted)
    # The two sessions' text side (the one-statement search, recall/one.py, skips it).
    monkeypatch.setattr(recall_one, "ENABLED", False)
    rng = random.Random(2029)
    compared = held_all = mixed = 0
    for _ in range(3):
        who = await _scope(svc, rng)
        for _ in range(8):
            query = " ".join(rng.sample(WORDS, rng.randint(1, 4)))
            mode = rng.choice([rr.Mode.HYBRID, rr.Mode.FULLTEXT])
            prefix = rng.choice(["", "a/"])
            answers: dict[int, Answer] = {}
            for most in (FULL, 12, 0):  # all held, some kinds, none
                monkeypatch.setattr(recall_text, "HELD_MAX_ROWS", most)
                ran.clear()
                answers[most] = await _answer(svc, who, query, mode, prefix)
                if most == FULL:
                    # Every kind held: the text side is one statement and the hit read.
                    assert ran["READ_TEXT_SIDE"] == 1
                    assert not OLD_READS & set(ran), ran
                    held_all += 1
                if most == 12 and ran["READ_TEXT_SIDE"] and OLD_READS & set(ran):
                    mixed += 1  # some kinds held, the others read by their legs
                if most == 0:
                    assert ran["READ_TEXT_SIDE"] == 0
                    assert ran["READ_TERM_STATS"] == 1
            monkeypatch.setattr(recall_text, "HELD_MAX_ROWS", FULL)
            assert answers[FULL][0], query  # every query word is in the scope: hits
            assert answers[FULL] == answers[0], query
            assert answers[12] == answers[0], query
            compared += 1
    assert compared == held_all == 24
    assert mixed > 0
