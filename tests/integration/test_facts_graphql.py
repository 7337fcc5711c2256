"""Facts and time through GraphQL on the real Neo4j: as_of, known_at, supersession, judging."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql

FACT_FIELDS = "id text validAt invalidAt createdAt expiredAt supersedes supersededBy confidence"
ASSERT = (
    "mutation($facts: [FactInput!]!, $scope: Scope! = USER) {"
    " assertFacts(scope: $scope, facts: $facts, place: false) { created fact { "
    + FACT_FIELDS
    + " } } }"
)
FACTS = (
    "query($s: EntityInput, $asOf: Instant, $knownAt: Instant, $retired: Boolean! = false,"
    " $refuted: Boolean! = false) { facts(scope: USER, subject: $s, asOf: $asOf,"
    " knownAt: $knownAt, includeRetired: $retired, includeRefuted: $refuted)"
    " { items { id text } hasMore } }"
)
SUPERSEDE = """mutation($id: ID!, $by: ID!) { supersedeFact(scope: USER, id: $id,
  byId: $by) { already retired { id invalidAt expiredAt supersededBy } replacement { id } } }"""


RETRACT = """mutation($id: ID!, $at: Instant) { retractFact(scope: USER, id: $id,
  invalidAt: $at) { id } }"""


@pytest.fixture
def who(token: Callable[..., str], tenant: str, request: pytest.FixtureRequest) -> str:
    # One user per test keeps every test's facts apart.
    return token(tenant, f"u-{request.node.name[:40]}", "planner")


def fact(
    subject: str, obj: str, valid: str | None = None, invalid: str | None = None, **extra: Any
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "subject": {"type": "country", "name": subject},
        "predicate": "head of state",
        "objectValue": obj,
        "validAt": valid,
        "invalidAt": invalid,
    }
    return {**item, **extra}


def assert_facts(gql: Gql, who: str, *items: dict[str, Any]) -> list[dict[str, Any]]:
    return [a["fact"] for a in ok(gql(ASSERT, who, facts=list(items)))["assertFacts"]]


def texts(gql: Gql, who: str, **variables: Any) -> list[str]:
    page = ok(gql(FACTS, who, **variables))["facts"]
    assert page["hasMore"] is False
    return [f["text"] for f in page["items"]]


def test_interval_2019_2021_answers_2020_not_2022(gql: Gql, who: str) -> None:
    assert_facts(gql, who, fact("Ruritania", "Rudolf", "2019", "2021"))
    subject = {"type": "country", "name": "ruritania"}
    assert texts(gql, who, s=subject, asOf="2020") == ["Ruritania head of state Rudolf"]
    assert texts(gql, who, s=subject, asOf="2022") == []
    assert texts(gql, who, s=subject, asOf="2018-12-31T23:59:59Z") == []
    assert texts(gql, who, s=subject, asOf="2021") == []  # half-open: the end is exclusive


def test_future_end_is_current_and_past_end_is_not(gql: Gql, who: str) -> None:
    assert_facts(
        gql,
        who,
        fact("Freedonia", "Firefly", "2020", "2999"),
        fact("Sylvania", "Trentino", "2000", "2001"),
    )
    assert texts(gql, who) == ["Freedonia head of state Firefly"]


def test_supersession_chain_answers_each_period(gql: Gql, who: str) -> None:
    a, b, c = assert_facts(
        gql,
        who,
        fact("Elbonia", "Anna", "2010"),
        fact("Elbonia", "Bert", "2015"),
        fact("Elbonia", "Cleo", "2020"),
    )
    known_before = a["createdAt"]
    time.sleep(0.05)
    first = ok(gql(SUPERSEDE, who, id=a["id"], by=b["id"]))["supersedeFact"]
    assert first["already"] is False
    assert first["retired"]["invalidAt"].startswith("2015-01-01")
    assert first["retired"]["supersededBy"] == b["id"]
    ok(gql(SUPERSEDE, who, id=b["id"], by=c["id"]))
    s = {"type": "country", "name": "Elbonia"}
    assert texts(gql, who, s=s, asOf="2012") == ["Elbonia head of state Anna"]
    assert texts(gql, who, s=s, asOf="2017") == ["Elbonia head of state Bert"]
    # Exactly at a correction's instant only the newer fact holds (half-open intervals).
    assert texts(gql, who, s=s, asOf="2015") == ["Elbonia head of state Bert"]
    assert texts(gql, who, s=s, asOf="2020") == ["Elbonia head of state Cleo"]
    assert texts(gql, who, s=s) == ["Elbonia head of state Cleo"]
    # What we believed before the corrections: A (and its successors, not yet retired) open.
    believed = texts(gql, who, s=s, knownAt=known_before)
    assert "Elbonia head of state Anna" in believed
    assert set(texts(gql, who, s=s, knownAt=known_before, asOf="2012")) == {
        "Elbonia head of state Anna"
    }
    history = ok(
        gql(
            "query($id: ID!) { factHistory(scope: USER, id: $id) { items { id } } }",
            who,
            id=b["id"],
        )
    )["factHistory"]["items"]
    assert [h["id"] for h in history] == [a["id"], b["id"], c["id"]]


def test_retire_once_same_pair_noop_and_self_supersede(gql: Gql, who: str) -> None:
    a, b, c = assert_facts(
        gql, who, fact("Oz", "A", "2001"), fact("Oz", "B", "2002"), fact("Oz", "C", "2003")
    )
    ok(gql(SUPERSEDE, who, id=a["id"], by=b["id"]))
    again = ok(gql(SUPERSEDE, who, id=a["id"], by=b["id"]))["supersedeFact"]
    assert again["already"] is True
    refused = gql(SUPERSEDE, who, id=a["id"], by=c["id"])
    assert code_of(refused) == "CONFLICT"
    assert b["id"] in refused["errors"][0]["message"]
    assert code_of(gql(SUPERSEDE, who, id=c["id"], by=c["id"])) == "INVALID_ARGUMENT"


def test_reassert_is_idempotent_and_never_revives(gql: Gql, who: str) -> None:
    a, b = assert_facts(
        gql, who, fact("Genovia", "Mia", "2004"), fact("Genovia", "Clarisse", "2010")
    )
    again = ok(gql(ASSERT, who, facts=[fact("Genovia", "Mia", "2004")]))["assertFacts"][0]
    assert again["created"] is False
    assert again["fact"]["id"] == a["id"]
    assert again["fact"]["createdAt"] == a["createdAt"]
    ok(gql(SUPERSEDE, who, id=a["id"], by=b["id"]))
    revived = ok(gql(ASSERT, who, facts=[fact("Genovia", "Mia", "2004")]))["assertFacts"][0]
    assert revived["fact"]["expiredAt"] is not None
    assert texts(gql, who, s={"type": "country", "name": "Genovia"}) == [
        "Genovia head of state Clarisse"
    ]


JUDGE = """mutation($id: ID!, $v: Verdict!, $r: String! = "no source says so") {
  judgeFact(scope: USER, id: $id, verdict: $v, reason: $r)
  { confidence verdict provenance { judgedBy } } }"""
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m)
  { chunks { id type } } }"""


def test_judging_hides_unsupported_but_never_deletes(gql: Gql, who: str) -> None:
    doc = ok(gql(IMPORT, who, m="# Lore\n\nAslan rules Narnia.\n"))["importDocument"]
    chunk = next(c["id"] for c in doc["chunks"] if c["type"] == "PARAGRAPH")
    [a] = assert_facts(
        gql, who, fact("Narnia", "Aslan", source={"chunkId": chunk, "start": 0, "end": 5})
    )
    judged = ok(gql(JUDGE, who, id=a["id"], v="UNSUPPORTED"))["judgeFact"]
    assert judged == {
        "confidence": 0.0,
        "verdict": "UNSUPPORTED",
        "provenance": {"judgedBy": "planner"},
    }
    assert texts(gql, who) == []
    assert texts(gql, who, refuted=True) == ["Narnia head of state Aslan"]
    ok(gql(JUDGE, who, id=a["id"], v="UNCLEAR"))
    assert texts(gql, who) == ["Narnia head of state Aslan"]
    assert code_of(gql(JUDGE, who, id=a["id"], v="SUPPORTED", r=" ")) == "INVALID_ARGUMENT"


def test_only_an_operator_vouches_for_a_fact_without_a_source(
    gql: Gql, token: Callable[..., str], tenant: str
) -> None:
    operator = token(tenant, "ops-user", None, admin=True)
    agent = token(tenant, "ops-user", "planner")
    [a] = assert_facts(gql, operator, fact("Atlantis", "Poseidon"))
    assert code_of(gql(JUDGE, agent, id=a["id"], v="SUPPORTED")) == "FORBIDDEN"
    assert code_of(gql(JUDGE, operator, id=a["id"], v="MISTYPED")) == "INVALID_ARGUMENT"
    vouched = ok(gql(JUDGE, operator, id=a["id"], v="SUPPORTED"))["judgeFact"]
    assert vouched["provenance"]["judgedBy"] == "operator"
    # the platform operator role without an agent vouches the same way
    platform = token(tenant, "sre", None, operator=True)
    [b] = assert_facts(gql, platform, fact("Lemuria", "Mu"))
    vouched = ok(gql(JUDGE, platform, id=b["id"], v="SUPPORTED"))["judgeFact"]
    assert vouched["provenance"]["judgedBy"] == "operator"


def test_retract_ends_a_fact_without_replacement(gql: Gql, who: str) -> None:
    [a] = assert_facts(gql, who, fact("Latveria", "Doom", "1990"))
    retract = """mutation($id: ID!) { retractFact(scope: USER, id: $id, invalidAt: "2000")
      { invalidAt expiredAt } }"""
    assert code_of(gql(RETRACT, who, id=a["id"], at="2000-13")) == "INVALID_ARGUMENT"
    done = ok(gql(retract, who, id=a["id"]))["retractFact"]
    assert done["invalidAt"].startswith("2000-01-01")
    assert done["expiredAt"] is None
    assert texts(gql, who, asOf="1995") == ["Latveria head of state Doom"]
    assert texts(gql, who) == []
    assert code_of(gql(retract, who, id=a["id"])) == "CONFLICT"


@pytest.mark.parametrize(
    ("valid", "invalid"),
    [("yesterday", None), ("2020-02-30", None), ("2021", "2020"), ("2020", "2020")],
)
def test_bad_times_are_refused_and_write_nothing(
    gql: Gql, who: str, valid: str, invalid: str | None
) -> None:
    body = gql(
        ASSERT, who, facts=[fact("Nowhere", "Nobody", "2001"), fact("Nowhere", "X", valid, invalid)]
    )
    assert code_of(body) == "INVALID_ARGUMENT"
    assert texts(gql, who, retired=True) == []
    refused = gql(FACTS, who, asOf="last week")
    assert code_of(refused) == "INVALID_ARGUMENT"
    assert "$asOf" in refused["errors"][0]["message"]
    literal = gql('{ facts(scope: USER, asOf: "2020-02-30") { items { id } } }', who)
    assert code_of(literal) == "INVALID_ARGUMENT"
    assert literal["errors"][0]["locations"] == [{"line": 1, "column": 28}]


def test_other_scopes_fact_reads_like_a_missing_one(
    gql: Gql, token: Callable[..., str], tenant: str, who: str
) -> None:
    [a] = assert_facts(gql, who, fact("Wakanda", "T'Challa"))
    other = token(tenant, "someone-else", "planner")
    reads = {
        "fact": "query($id: ID!) { fact(scope: USER, id: $id) { id } }",
        "factHistory": "query($id: ID!) { factHistory(scope: USER, id: $id) { items { id } } }",
    }
    for name, query in reads.items():
        assert ok(gql(query, who, id=a["id"]))[name] is not None
        foreign = gql(query, other, id=a["id"])
        missing = gql(query, other, id="0" * 32)
        assert foreign == missing == {"data": {name: None}}
    for write in (
        gql(SUPERSEDE, other, id=a["id"], by="1" * 32),
        gql(RETRACT, other, id=a["id"]),
        gql(JUDGE, other, id=a["id"], v="SUPPORTED"),
    ):
        assert code_of(write) == "NOT_FOUND"
        assert write["data"] is None
    assert ok(gql(reads["fact"], who, id=a["id"]))["fact"] == {"id": a["id"]}


def test_graph_recall_walks_hops_with_the_time_filter(gql: Gql, who: str) -> None:
    person = {"type": "person", "name": "Ada Lovelace"}
    items = [
        {
            "subject": person,
            "predicate": "collaborated with",
            "object": {"type": "person", "name": "Charles Babbage"},
        },
        {
            "subject": {"type": "person", "name": "Charles Babbage"},
            "predicate": "designed",
            "object": {"type": "machine", "name": "Analytical Engine"},
        },
        {
            "subject": person,
            "predicate": "lived in",
            "objectValue": "London",
            "validAt": "1815",
            "invalidAt": "1852",
        },
    ]
    assert_facts(gql, who, *items)
    recall = """query($q: String, $hops: Int!, $asOf: Instant) { graphRecall(scope: USER, query: $q,
      hops: $hops, asOf: $asOf) { seeds { name } entities { name } facts { text } } }"""
    one = ok(gql(recall, who, q="Ada Lovelace", hops=1))["graphRecall"]
    assert "Ada Lovelace" in {e["name"] for e in one["seeds"]}
    two = ok(gql(recall, who, q="Ada Lovelace", hops=2))["graphRecall"]
    assert "Analytical Engine" in {e["name"] for e in two["entities"]}
    assert "Ada Lovelace lived in London" not in {f["text"] for f in two["facts"]}
    past = ok(gql(recall, who, q="Ada Lovelace", hops=1, asOf="1840"))["graphRecall"]
    assert "Ada Lovelace lived in London" in {f["text"] for f in past["facts"]}
    assert code_of(gql(recall, who, q=None, hops=1)) == "INVALID_ARGUMENT"
    assert code_of(gql(recall, who, q="x", hops=9)) == "INVALID_ARGUMENT"


def test_batches_over_200_are_refused(gql: Gql, who: str) -> None:
    body = gql(ASSERT, who, facts=[fact("Big", f"n{i}") for i in range(201)])
    assert code_of(body) == "INVALID_ARGUMENT"
    assert "201" in body["errors"][0]["message"]
    # Nothing of the refused batch was written, not even its first 200 items.
    assert texts(gql, who, s={"type": "country", "name": "Big"}, retired=True) == []
