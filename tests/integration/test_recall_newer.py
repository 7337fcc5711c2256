"""The newer statement first on the real Neo4j: a statement and its later update, stored in
both arrival orders. Without the lever the original (worded closer to the question) ranks
above the update; with it the later observed ranks first whichever arrived first, and its
``explain.newer_than`` names the original. Turns of another speaker are never reordered, and
by default (``recall_newer_first_revisions``) nor is a later turn that states no changed value."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from palimpsest.domain.ranking.fusion import Levers, Source
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.documents import importing as importer
from palimpsest.resolvers.recall import asks
from palimpsest.resolvers.recall.hits import Hit
from palimpsest.resolvers.recall.planner import Mode, recall
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal

QUESTION = "Which database do I use for the inventory service?"
# The update states a value the original does not (7): it reads as a revision.
ORIGINAL = "User: I use PostgreSQL 13 as the database for the inventory service."
UPDATE = "User: I moved the inventory service off PostgreSQL 13; its database is now MongoDB 7."
# The same change told without a figure.
PLAIN_ORIGINAL = "User: I use PostgreSQL as the database for the inventory service."
PLAIN_UPDATE = "User: I moved the inventory service off PostgreSQL; its database is now MongoDB."
EARLY = datetime(2024, 1, 10, 9, 0, tzinfo=UTC)
LATE = datetime(2024, 3, 2, 9, 0, tzinfo=UTC)
# Other turns of each day, unlike each other (a repeated turn would be reordered too).
FILLER = {
    EARLY: ["User: The billing service sends its invoices by e-mail every Monday."],
    LATE: ["User: My laptop runs Debian and I write most of the code in Emacs."],
}
THRESHOLD = 0.5  # the two statements' cosine is well above it (asserted below)


async def load(svc: Services, who: Principal, text: str, at: datetime) -> None:
    body = "\n\n".join([text, *FILLER[at]])
    await importer.import_document(svc, who, Scope.USER, body, f"notes {at:%Y-%m-%d}", None, at)


async def ask(
    svc: Services, who: Principal, newer_first: float, mode: Mode, revision: bool = True
) -> list[Hit]:
    asked = asks.request_of(svc, asks.Ask(QUESTION, top_k=5), frozenset({Source.DOCUMENTS}))
    levers = replace(Levers.of(svc.settings), newer_first=newer_first, newer_revision=revision)
    return (await recall(svc, who, [Scope.USER], replace(asked, mode=mode, levers=levers))).hits


def texts(hits: list[Hit]) -> list[str]:
    return [h.text.strip() for h in hits]


@pytest.mark.parametrize("update_first", [False, True], ids=["original-first", "update-first"])
@pytest.mark.parametrize("mode", [Mode.HYBRID, Mode.FULLTEXT])
async def test_the_later_observed_statement_ranks_first(
    svc: Services, mode: Mode, update_first: bool
) -> None:
    who = principal(tenant_id=f"newer-{uuid.uuid4().hex[:8]}")
    arrivals = [(ORIGINAL, EARLY), (UPDATE, LATE)]
    for text, at in reversed(arrivals) if update_first else arrivals:
        await load(svc, who, text, at)

    plain = texts(await ask(svc, who, 0.0, mode))
    assert plain.index(ORIGINAL) < plain.index(UPDATE)  # the legs alone prefer the original

    hits = await ask(svc, who, THRESHOLD, mode)
    got = texts(hits)
    assert got.index(UPDATE) < got.index(ORIGINAL)
    assert sorted(got) == sorted(plain)  # reordered, nothing added or dropped
    moved = hits[got.index(UPDATE)]
    assert moved.explain is not None
    assert moved.explain.newer_than is not None
    assert moved.explain.newer_than.id == hits[got.index(ORIGINAL)].id
    assert moved.explain.newer_than.cosine >= THRESHOLD
    assert all(h.explain is None or h.explain.newer_than is None for h in hits if h is not moved)


async def test_another_speaker_does_not_revise_a_statement(svc: Services) -> None:
    who = principal(tenant_id=f"newer-{uuid.uuid4().hex[:8]}")
    await load(svc, who, ORIGINAL, EARLY)
    await load(svc, who, UPDATE.replace("User:", "Assistant:", 1), LATE)

    plain = texts(await ask(svc, who, 0.0, Mode.HYBRID))
    assert texts(await ask(svc, who, THRESHOLD, Mode.HYBRID)) == plain


async def test_a_later_turn_without_a_changed_value_is_moved_only_without_the_revision_signal(
    svc: Services,
) -> None:
    who = principal(tenant_id=f"newer-{uuid.uuid4().hex[:8]}")
    await load(svc, who, PLAIN_ORIGINAL, EARLY)
    await load(svc, who, PLAIN_UPDATE, LATE)
    plain = texts(await ask(svc, who, 0.0, Mode.HYBRID))
    assert plain.index(PLAIN_ORIGINAL) < plain.index(PLAIN_UPDATE)
    # With the signal (the default) no value changed: the legs' order stands.
    assert texts(await ask(svc, who, THRESHOLD, Mode.HYBRID)) == plain
    # Every near pair of one speaker, as before the signal: the later goes first.
    got = texts(await ask(svc, who, THRESHOLD, Mode.HYBRID, revision=False))
    assert got.index(PLAIN_UPDATE) < got.index(PLAIN_ORIGINAL)
