"""Fusion per kind of question on the real Neo4j (recall lever 8, issue 28 item 4).

``explain.form`` names the question's form, and the legs' weights and the boosts it shows are
the ones that form's row of ``recall_forms.TABLE`` set; a call's own ``weights`` win; with
``PALIMPSEST_RECALL_QUESTION_FORMS=false`` every question gets the settings and no form.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from palimpsest.config import Settings
from palimpsest.resolvers.recall import forms as recall_forms
from palimpsest.resolvers.recall.forms import Form, Weights
from palimpsest.server import serve_in_thread
from tests.integration.answers import ok
from tests.integration.conftest import Gql, gql_over

IMPORT = """mutation($m: String!, $at: Instant) {
  importDocument(scope: USER, markdown: $m, observedAt: $at) { summary { id } } }"""
SEARCH = """query($q: String!, $w: LegWeightsInput) {
  search(scope: USER, query: $q, topK: 10, weights: $w) {
    hits { text score explain { form fused legs { leg weight } boosts { lever factor } } } } }"""
TURNS = [
    "Mira: I went to the pottery class yesterday.",
    "Mira: Pottery is my favourite class, honestly.",
    "Tomas: The kiln at the pottery class broke in May.",
]
SAID = "2023-05-08T13:56:00Z"
ROW = Weights(fulltext_weight=3.0, when_boost=2.0)


@pytest.fixture
def when_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row for "when" questions (the app runs in this process, so it reads this table)."""
    monkeypatch.setattr(recall_forms, "TABLE", {Form.WHEN: ROW})


@pytest.fixture(scope="module")
def on_gql(settings: Settings) -> Iterator[Gql]:
    """The app with the lever on (it is off by default)."""
    on = settings.replace(recall_question_forms=True)
    with serve_in_thread(on) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield gql_over(client)


@pytest.fixture(scope="module")
def off_gql(settings: Settings) -> Iterator[Gql]:
    off = settings.replace(recall_question_forms=False)
    with serve_in_thread(off) as url, httpx.Client(base_url=url, timeout=30) as client:
        yield gql_over(client)


def loaded(gql: Gql, token: Callable[..., str], tenant_id: str) -> str:
    """The turns imported into a fresh tenant; the planner's token."""
    who = token(tenant_id, "alice", "planner")
    ok(gql(IMPORT, who, m="\n\n".join(TURNS) + "\n", at=SAID))
    return who


def hits(body: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = ok(body)["search"]["hits"]
    assert found
    return found


def weights(hit: dict[str, Any]) -> dict[str, float]:
    return {p["leg"]: p["weight"] for p in hit["explain"]["legs"]}


def boosts(hit: dict[str, Any]) -> dict[str, float]:
    return {b["lever"]: b["factor"] for b in hit["explain"]["boosts"]}


def test_explain_names_the_form_and_the_weights_its_row_set(
    on_gql: Gql, token: Callable[..., str], tenant_id: str, when_row: None
) -> None:
    gql = on_gql
    who = loaded(gql, token, tenant_id)
    when = hits(gql(SEARCH, who, q="When did Mira go to the pottery class?"))
    for h in when:
        assert h["explain"]["form"] == "when"
        assert weights(h) == {"vector": 1.0, "fulltext": 3.0}
    timed = [h for h in when if "whenQuestion" in boosts(h)]
    assert timed
    assert all(boosts(h)["whenQuestion"] == 2.0 for h in timed)
    who_hits = hits(gql(SEARCH, who, q="Who went to the pottery class?"))
    for h in who_hits:
        assert h["explain"]["form"] == "who"
        assert weights(h) == {"vector": 1.0, "fulltext": 1.0}  # no row: the settings


def test_a_calls_own_weights_are_kept(
    on_gql: Gql, token: Callable[..., str], tenant_id: str, when_row: None
) -> None:
    gql = on_gql
    who = loaded(gql, token, tenant_id)
    w = {"vector": 0.5, "fulltext": 0.25}
    for h in hits(gql(SEARCH, who, q="When did Mira go to the pottery class?", w=w)):
        assert weights(h) == {"vector": 0.5, "fulltext": 0.25}
        assert boosts(h).get("whenQuestion", 2.0) == 2.0  # the boosts of the row still apply


def test_switched_off_every_question_gets_the_settings(
    off_gql: Gql, token: Callable[..., str], tenant_id: str, when_row: None
) -> None:
    who = loaded(off_gql, token, tenant_id)
    for h in hits(off_gql(SEARCH, who, q="When did Mira go to the pottery class?")):
        assert h["explain"]["form"] is None
        assert weights(h) == {"vector": 1.0, "fulltext": 1.0}
        assert boosts(h).get("whenQuestion", 1.3) == 1.3
