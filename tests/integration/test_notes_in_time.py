"""Key/value notes that live in time: observedAt, validAt/invalidAt, asOf reads, and recall's
time filters applied to notes as to facts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.answers import ok
from tests.integration.conftest import Gql

SET = """mutation($k: String!, $v: JSON!, $obs: Instant, $valid: Instant, $invalid: Instant) {
  memorySet(scope: USER, key: $k, value: $v, embed: true, observedAt: $obs, validAt: $valid,
            invalidAt: $invalid) { key observedAt validAt invalidAt } }"""
GET = """query($k: String!, $at: Instant) { memory(scope: USER, key: $k, asOf: $at) {
  value validAt invalidAt } }"""
LIST = """query($at: Instant) { memories(scope: USER, asOf: $at) { items { key } } }"""
INCREMENT = """mutation($k: String!) { memoryIncrement(scope: USER, key: $k, delta: 1) {
  value observedAt validAt invalidAt } }"""
RECALL = """query($q: String!, $when: WhenInput) {
  recall(scope: USER, query: $q, topK: 10, sources: [NOTES], when: $when) {
    hits { key observedAt inWindow }
    timeFilter { mode inWindow outOfWindow undated } } }"""


def code(body: dict[str, Any]) -> str:
    # A nullable field answers null beside its error; a non-null one nulls the whole data.
    assert not any((body.get("data") or {}).values()), body
    return str(body["errors"][0]["extensions"]["code"])


@pytest.fixture
def who(token: Callable[..., str], tenant_id: str) -> str:
    return token(tenant_id, "alice", "planner")


@pytest.fixture
def dated(gql: Gql, who: str) -> str:
    """Three notes on one theme: Porto until 2021, Lisbon since 2021, and an undated one."""
    ok(gql(SET, who, k="home/porto", v="Alice lives in Porto", valid="2015", invalid="2021"))
    ok(gql(SET, who, k="home/lisbon", v="Alice lives in Lisbon", valid="2021"))
    ok(gql(SET, who, k="home/note", v="Alice lives by the sea"))
    return who


def test_a_note_keeps_its_times_and_reads_as_of_a_time(gql: Gql, dated: str) -> None:
    stored = ok(gql(SET, dated, k="x", v=1, obs="2024-05-01T10:00:00Z", valid="2024"))
    assert stored["memorySet"]["observedAt"].startswith("2024-05-01T10:00:00")
    assert stored["memorySet"]["validAt"].startswith("2024-01-01T00:00:00")
    assert stored["memorySet"]["invalidAt"] is None

    assert ok(gql(GET, dated, k="home/porto"))["memory"] is None  # ended in 2021: not now
    then = ok(gql(GET, dated, k="home/porto", at="2019-07-01"))["memory"]
    assert then["value"] == "Alice lives in Porto"
    assert ok(gql(GET, dated, k="home/porto", at="2021"))["memory"] is None  # half-open
    assert ok(gql(GET, dated, k="home/lisbon", at="2019"))["memory"] is None  # not yet
    assert ok(gql(GET, dated, k="home/note", at="1900"))["memory"] is not None  # undated

    def keys(at: str | None) -> list[str]:
        return [e["key"] for e in ok(gql(LIST, dated, at=at))["memories"]["items"]]

    assert keys(None) == ["home/lisbon", "home/note", "x"]
    assert keys("2019") == ["home/note", "home/porto"]


def test_bad_times_are_refused_and_change_nothing(gql: Gql, who: str) -> None:
    assert code(gql(SET, who, k="y", v=1, valid="last year")) == "INVALID_ARGUMENT"
    assert code(gql(SET, who, k="y", v=1, obs="2024-05-01T10:00:00")) == "INVALID_ARGUMENT"
    assert code(gql(SET, who, k="y", v=1, valid="2022", invalid="2021")) == "INVALID_ARGUMENT"
    assert code(gql(GET, who, k="y", at="soon")) == "INVALID_ARGUMENT"
    assert ok(gql(GET, who, k="y"))["memory"] is None


def test_reducers_keep_a_notes_times_and_set_replaces_them(gql: Gql, who: str) -> None:
    ok(gql(SET, who, k="n", v=1, obs="2023-01-02", valid="2020"))
    bumped = ok(gql(INCREMENT, who, k="n"))["memoryIncrement"]
    assert bumped["value"] == 2
    assert bumped["observedAt"].startswith("2023-01-02")
    assert bumped["validAt"].startswith("2020-01-01")
    replaced = ok(gql(SET, who, k="n", v=5))["memorySet"]
    assert (replaced["validAt"], replaced["observedAt"]) == (None, None)


def test_recall_applies_as_of_to_notes_as_to_facts(gql: Gql, dated: str) -> None:
    now = ok(gql(RECALL, dated, q="where does Alice live"))["recall"]
    assert {h["key"] for h in now["hits"]} == {"home/lisbon", "home/note"}
    then = ok(gql(RECALL, dated, q="where does Alice live", when={"asOf": "2019"}))["recall"]
    assert {h["key"] for h in then["hits"]} == {"home/porto", "home/note"}
    report = then["timeFilter"]
    # Kept with an interval: Porto; dropped by the time view: Lisbon; no interval: the note.
    assert (report["mode"], report["inWindow"], report["outOfWindow"], report["undated"]) == (
        "AS_OF",
        1,
        1,
        1,
    )


def test_recall_observed_window_applies_to_notes(gql: Gql, who: str) -> None:
    ok(gql(SET, who, k="trip/march", v="We hiked in the hills", obs="2024-03-10"))
    ok(gql(SET, who, k="trip/july", v="We hiked by the coast", obs="2024-07-10"))
    ok(gql(SET, who, k="trip/any", v="We like to hike"))
    window = {"from": "2024-03-01", "to": "2024-04-01", "slack": "1h"}
    prefer = ok(gql(RECALL, who, q="hiking", when=window))["recall"]
    assert prefer["hits"][0]["key"] == "trip/march"
    assert [h["inWindow"] for h in prefer["hits"]] == [True, None, False]
    assert (prefer["timeFilter"]["inWindow"], prefer["timeFilter"]["undated"]) == (1, 1)
    required = ok(gql(RECALL, who, q="hiking", when={**window, "missing": "REQUIRE"}))["recall"]
    assert [h["key"] for h in required["hits"]] == ["trip/march"]
    assert required["timeFilter"]["outOfWindow"] == 1
