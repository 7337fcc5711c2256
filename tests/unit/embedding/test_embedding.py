"""The question cache: exact vectors, one model run per new question and caller, bounded, LRU,
and never shared between callers (a hit is faster, so sharing would be a timing oracle)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from palimpsest.embedding import QueryVectors, Vector
from palimpsest.identity import Principal
from palimpsest.resolvers.services import Services
from tests.unit import principals
from tests.unit.recording import services


class Counting:
    model_name = "counting"
    dimensions = 2

    def __init__(self) -> None:
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        self.seen += texts
        return [Vector([float(len(t)), float(sum(map(ord, t)))]) for t in texts]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path


def principal(tenant: str, user: str, agent: str) -> Principal:
    return principals.principal(tenant_id=tenant, user_id=user, agent_name=agent)


def with_counting(size: int, home: Path) -> tuple[Services, Counting]:
    model = Counting()
    svc, _ = services(lambda statement, params: [], home)
    return replace(svc, embedder=model, questions=QueryVectors(size) if size else None), model


async def test_a_callers_repeated_question_runs_the_model_once(home: Path) -> None:
    svc, model = with_counting(10, home)
    who = principal("t1", "u1", "a1")
    first = await svc.embed_question(who, "what did we decide")
    again = await svc.embed_question(who, "what did we decide")
    assert again == first == Counting().embed(["what did we decide"])[0]
    assert model.seen == ["what did we decide"]


async def test_callers_never_share_a_cached_question(home: Path) -> None:
    svc, model = with_counting(10, home)
    for who in (
        principal("t1", "u1", "a1"),
        principal("t2", "u1", "a1"),
        principal("t1", "u2", "a1"),
        principal("t1", "u1", "a2"),
    ):
        await svc.embed_question(who, "salary of bob")
    assert model.seen == ["salary of bob"] * 4


async def test_answers_are_copies_a_caller_cannot_spoil(home: Path) -> None:
    svc, _ = with_counting(10, home)
    who = principal("t1", "u1", "a1")
    (await svc.embed_question(who, "alpha")).append(99.0)
    assert await svc.embed_question(who, "alpha") == Counting().embed(["alpha"])[0]


def test_the_least_recently_used_question_goes_first() -> None:
    cache = QueryVectors(2)
    cache.put("c", "a", Vector([1.0]))
    cache.put("c", "b", Vector([2.0]))
    assert cache.get("c", "a") == [1.0]  # a is now more recent than b
    cache.put("c", "c", Vector([3.0]))
    assert cache.get("c", "a") == [1.0]
    assert cache.get("c", "b") is None


async def test_off_and_long_questions_always_run_the_model(home: Path) -> None:
    svc, model = with_counting(0, home)
    who = principal("t1", "u1", "a1")
    await svc.embed_question(who, "alpha")
    await svc.embed_question(who, "alpha")
    svc, model_on = with_counting(10, home)
    long = "x" * (QueryVectors.MAX_CHARS + 1)
    await svc.embed_question(who, long)
    await svc.embed_question(who, long)
    assert model.seen == ["alpha", "alpha"]
    assert model_on.seen == [long, long]
