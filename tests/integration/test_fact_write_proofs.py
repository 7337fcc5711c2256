"""A fact write skips the reads its lock statement proves empty (``entities.Proof``), on the real
Neo4j: a batch key no stored fact holds skips ``KEY_CONFLICTS``, a subject no stored entity is
skips ``NEAR_DUPLICATE_FACTS``. Where the proof does not hold, the read runs and decides as
before: a stored key still conflicts, a stored subject under another spelling (or one with no
folded name, which is not resolved) still merges, and a new subject still merges into an
earlier fact of its own batch."""

from __future__ import annotations

import uuid

import pytest

from palimpsest.errors import Conflict
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.facts import ledger as facts
from palimpsest.resolvers.services import Services
from palimpsest.schema.drafts import EntityRef, FactDraft
from tests.unit.principals import principal


def fresh() -> Principal:
    return principal(tenant_id=f"proofs-{uuid.uuid4().hex[:8]}", user_id="alice")


def works_at(subject: str, company: str, key: str | None = None) -> FactDraft:
    person, company_ = EntityRef("person", subject), EntityRef("company", company)
    return FactDraft(person, "works at", company_, None, natural_key=key)


async def test_a_new_fact_of_a_new_subject_skips_both_reads(svc: Services, ran: list[str]) -> None:
    who = fresh()
    await facts.assert_facts(svc, who, Scope.USER, [works_at("Bob", "Acme")])
    ran.clear()
    [made] = await facts.assert_facts(svc, who, Scope.USER, [works_at("Ada", "Initech")])
    assert made.created
    assert "KEY_CONFLICTS" not in ran
    assert "NEAR_DUPLICATE_FACTS" not in ran
    ran.clear()
    [again] = await facts.assert_facts(svc, who, Scope.USER, [works_at("Ada", "Initech")])
    assert not again.created
    assert again.fact.id == made.fact.id
    assert "KEY_CONFLICTS" in ran  # the key is stored: it is checked
    assert "NEAR_DUPLICATE_FACTS" in ran  # the subject is stored


async def test_a_stored_key_naming_another_fact_still_conflicts(svc: Services) -> None:
    who = fresh()
    await facts.assert_facts(svc, who, Scope.USER, [works_at("Ada", "Initech", key="k:1")])
    with pytest.raises(Conflict, match="k:1"):  # a new subject, but the key is stored
        await facts.assert_facts(svc, who, Scope.USER, [works_at("Zed", "Acme", key="k:1")])
    batch = [works_at("Yan", "Acme", key="k:2"), works_at("Xia", "Acme", key="k:1")]
    with pytest.raises(Conflict, match="k:1"):  # one stored key among unstored ones
        await facts.assert_facts(svc, who, Scope.USER, batch)
    [kept] = (await facts.list_facts(svc, who, Scope.USER, now(svc), None, None, 10)).items
    assert kept.natural_key == "k:1"


def now(svc: Services) -> facts.TimeView:
    return facts.time_view(svc, None, None)


async def test_a_stored_subject_under_another_spelling_still_merges(svc: Services) -> None:
    who = fresh()
    [stored] = await facts.assert_facts(svc, who, Scope.USER, [works_at("Ada", "Initech")])
    # "ADA!" folds to Ada's name: the same entity, so the stored fact is its near-duplicate.
    [again] = await facts.assert_facts(svc, who, Scope.USER, [works_at("ADA!", "INITECH!")])
    assert again.merged == stored.fact.id


async def test_a_subject_without_a_folded_name_still_merges(svc: Services) -> None:
    who = fresh()
    # "!!!" folds to nothing, so its name is not resolved: nothing proves it new.
    [stored] = await facts.assert_facts(svc, who, Scope.USER, [works_at("!!!", "Initech")])
    [again] = await facts.assert_facts(svc, who, Scope.USER, [works_at("!!!", "Initech!")])
    assert again.merged == stored.fact.id


async def test_a_new_subject_still_merges_into_an_earlier_fact_of_its_batch(
    svc: Services, ran: list[str]
) -> None:
    who = fresh()
    first, second = await facts.assert_facts(
        svc, who, Scope.USER, [works_at("Ada", "Initech"), works_at("Ada", "INITECH!")]
    )
    assert "NEAR_DUPLICATE_FACTS" not in ran
    assert first.created
    assert second.merged == first.fact.id
