"""``store`` (``resolvers.store``) on a recording executor: filtered searches read doubling
pages until a short one, the window is cut after filtering, keys outside the namespace tree are
never shown, and namespaces are cut to the asked depth."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.notes import namespaces as ns
from palimpsest.embedding import Vector
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope
from palimpsest.resolvers.notes import namespaced as store
from tests.unit.principals import principal
from tests.unit.recording import NOW, services


def note(i: int, kind: str, key: str | None = None) -> Row:
    return {
        "key": key or ns.note_key(("docs",), f"n{i:05d}"),
        "value": f'{{"kind": "{kind}", "i": {i}}}',
        "expires_at": None,
        "created_at": NOW,
        "updated_at": NOW,
        "embedded": False,
        "observed_at": None,
        "valid_at": None,
        "invalid_at": None,
        "pinned": False,
        "tenant_id": "acme",
        "score": None,
    }


class Prefix:
    """``total`` notes in key order, every third of kind "a"; pages answer ``limit`` from
    ``after``."""

    def __init__(self, total: int) -> None:
        self.rows = [note(i, "a" if i % 3 == 0 else "b") for i in range(total)]

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        later = [r for r in self.rows if r["key"] > params["after"]]
        return later[: params["limit"]]


async def test_a_filter_reads_doubling_pages_until_one_comes_back_short(tmp_path: Path) -> None:
    svc, recorder = services(Prefix(900), tmp_path)
    found = await store.search(svc, principal(), Scope.USER, ["docs"], {"kind": "a"}, None, 250, 0)
    assert len(found) == 250
    assert all(n.entry.value == {"kind": "a", "i": 3 * k} for k, n in enumerate(found))
    assert [c.params["limit"] for c in recorder.calls] == [250, 500]  # 250 + 500 rows hold 250


async def test_the_window_is_cut_after_the_filter(tmp_path: Path) -> None:
    svc, _ = services(Prefix(30), tmp_path)
    found = await store.search(svc, principal(), Scope.USER, ["docs"], {"kind": "a"}, None, 3, 2)
    assert [n.entry.value for n in found] == [{"kind": "a", "i": i} for i in (6, 9, 12)]


async def test_without_a_filter_one_read_of_the_window_answers(tmp_path: Path) -> None:
    svc, recorder = services(Prefix(900), tmp_path)
    found = await store.search(svc, principal(), Scope.USER, ["docs"], None, None, 5, 10)
    assert [n.name for n in found] == [f"n{i:05d}" for i in range(10, 15)]
    assert [c.params["limit"] for c in recorder.calls] == [15]


async def test_a_key_outside_the_namespace_tree_is_never_shown(tmp_path: Path) -> None:
    rows = [note(0, "a", key="plain-key"), note(1, "a")]
    svc, _ = services(lambda s, p: rows, tmp_path)
    found = await store.search(svc, principal(), Scope.USER, ["docs"], None, None, 10, 0)
    assert [n.name for n in found] == ["n00001"]


class TwoSided:
    """A model with a query side (as e5's prefix): questions and passages embed apart."""

    model_name = "two-sided"
    dimensions = 4

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return [Vector([1.0, 0.0, 0.0, 0.0]) for _ in texts]

    def embed_queries(self, texts: Sequence[str]) -> list[Vector]:
        return [Vector([0.0, 1.0, 0.0, 0.0]) for _ in texts]


async def test_a_ranked_search_embeds_its_query_as_a_question(tmp_path: Path) -> None:
    svc, recorder = services(lambda s, p: [], tmp_path)
    svc = dataclasses.replace(svc, embedder=TwoSided())
    await store.search(svc, principal(), Scope.USER, ["docs"], None, "billing", 5, 0)
    assert [list(c.params["vector"]) for c in recorder.calls] == [[0.0, 1.0, 0.0, 0.0]]


@pytest.mark.parametrize(("limit", "offset"), [(0, 0), (store.MAX_LIMIT + 1, 0), (1, -1)])
async def test_a_window_out_of_bounds_reads_nothing(
    tmp_path: Path, limit: int, offset: int
) -> None:
    svc, recorder = services(Prefix(3), tmp_path)
    with pytest.raises(InvalidArgument):
        await store.search(svc, principal(), Scope.USER, ["docs"], None, None, limit, offset)
    assert recorder.calls == []


async def test_namespaces_are_cut_to_the_depth_and_deduplicated(tmp_path: Path) -> None:
    # As the statement returns them: a key's namespace part, after the root.
    paths = [{"path": p} for p in ("a/b/c", "a/b/d", "e")]
    svc, _ = services(lambda s, p: paths, tmp_path)
    got = await store.list_namespaces(svc, principal(), Scope.USER, None, None, 2, 10, 0)
    assert got == [("a", "b"), ("e",)]
    with pytest.raises(InvalidArgument):
        await store.list_namespaces(svc, principal(), Scope.USER, None, None, 0, 10, 0)
