"""Memory that reconciles itself (docs/spec.md, Reconciliation), through GraphQL on Neo4j.

A predicate the ontology declares single-valued closes the fact it replaces, in either
arrival order, in the write's transaction; transaction time keeps every version of an end.
"""

from __future__ import annotations

import asyncio
import itertools
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import pytest

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.jobs.portability import import_from_file
from palimpsest.resolvers.services import Services
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import HARVEST, drain
from tests.integration.test_erasure import ERASE_USER

ONTOLOGY = """# Tenant ontology
status: confirmed

## person
scope: user
single: lives in
same: lives in = resides in

## employee
extends: person
single: works at
"""
SET_ONTOLOGY = "mutation($m: String!) { setOntology(markdown: $m) { status } }"
FACT = "id text validAt invalidAt expiredAt supersedes supersededBy object { name }"
ASSERT = (
    "mutation($facts: [FactInput!]!) { assertFacts(scope: USER, facts: $facts, place: false)"
    " { created fact { "
    + FACT
    + " } closed { invalidAt reason byId sameStart fact { "
    + FACT
    + " } } } }"
)
FACTS = (
    "query($asOf: Instant, $knownAt: Instant, $retired: Boolean! = false, $p: String) {"
    ' facts(scope: USER, subject: {type: "person", name: "Alice"}, predicate: $p,'
    " asOf: $asOf, knownAt: $knownAt, includeRetired: $retired, limit: 100)"
    " { items { " + FACT + " } } }"
)
ALL = [Scope.AGENT, Scope.USER, Scope.TENANT]


@pytest.fixture
def org(token: Callable[..., str], gql: Gql) -> dict[str, str]:
    """A tenant of its own whose confirmed ontology declares `lives in` single-valued."""
    tenant = f"rec-{uuid.uuid4().hex[:8]}"
    admin = token(tenant, "root", None, admin=True)
    ok(gql(SET_ONTOLOGY, admin, m=ONTOLOGY))
    member = token(tenant, "alice", "planner", memory_scopes=ALL, sql_scopes=ALL)
    return {"tenant": tenant, "admin": admin, "member": member}


def lives(
    city: str, valid: str | None, predicate: str = "lives in", **extra: Any
) -> dict[str, Any]:
    item = {
        "subject": {"type": "person", "name": "Alice"},
        "predicate": predicate,
        "object": {"type": "city", "name": city},
        "validAt": valid,
    }
    return {**item, **extra}


def assert_one(gql: Gql, who: str, item: dict[str, Any]) -> dict[str, Any]:
    [result] = ok(gql(ASSERT, who, facts=[item]))["assertFacts"]
    return dict(result)


def cities(gql: Gql, who: str, **variables: Any) -> list[str]:
    items = ok(gql(FACTS, who, **variables))["facts"]["items"]
    return [f["object"]["name"] for f in items]


@pytest.mark.parametrize("order", ["lisbon first", "porto first"])
def test_lisbon_and_porto_in_either_order(gql: Gql, org: dict[str, str], order: str) -> None:
    who = org["member"]
    lisbon, porto = lives("Lisbon", "2020"), lives("Porto", "2023")
    first, second = (lisbon, porto) if order == "lisbon first" else (porto, lisbon)
    assert assert_one(gql, who, first)["closed"] == []
    result = assert_one(gql, who, second)
    [closure] = result["closed"]
    assert closure["reason"] == "SINGLE_VALUED"
    assert closure["invalidAt"].startswith("2023-01-01")
    assert closure["fact"]["object"]["name"] == "Lisbon"
    assert closure["fact"]["invalidAt"].startswith("2023-01-01")
    assert closure["fact"]["expiredAt"] is not None
    assert closure["sameStart"] is False
    # Linked both ways.
    closed, closer = closure["fact"], ({**result["fact"]} if order == "lisbon first" else None)
    assert closed["supersededBy"] == closure["byId"]
    if closer is not None:
        assert closer["supersedes"] == closed["id"]
    assert cities(gql, who, asOf="2021") == ["Lisbon"]
    assert cities(gql, who, asOf="2024") == ["Porto"]
    assert cities(gql, who) == ["Porto"]


def test_an_alias_of_the_predicate_closes_too_and_other_predicates_do_not(
    gql: Gql, org: dict[str, str]
) -> None:
    who = org["member"]
    assert_one(gql, who, lives("Lisbon", "2020"))
    [closure] = assert_one(gql, who, lives("Porto", "2023", predicate="Resides   In"))["closed"]
    assert closure["fact"]["object"]["name"] == "Lisbon"
    # Many-valued (undeclared) predicates stay as they are.
    assert assert_one(gql, who, lives("Paris", "2021", predicate="visited"))["closed"] == []
    assert assert_one(gql, who, lives("Rome", "2022", predicate="visited"))["closed"] == []
    assert sorted(cities(gql, who, asOf="2024", p="visited")) == ["Paris", "Rome"]


def test_known_at_reads_the_end_believed_then(gql: Gql, org: dict[str, str]) -> None:
    who = org["member"]
    lisbon = assert_one(gql, who, lives("Lisbon", "2020"))["fact"]
    time.sleep(0.05)
    before = ok(gql(FACTS, who))["facts"]["items"][0]
    assert before["id"] == lisbon["id"]
    # Instant has second precision: the next whole second, then wait until it has passed.
    second = int(time.time()) + 1
    believed_then = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))
    time.sleep(second - time.time() + 0.2)
    assert_one(gql, who, lives("Porto", "2023"))
    # Before the closure the server believed Lisbon open-ended, and knew nothing of Porto,
    # not even with includeRetired.
    [then] = ok(gql(FACTS, who, asOf="2024", knownAt=believed_then))["facts"]["items"]
    assert (then["object"]["name"], then["invalidAt"], then["expiredAt"]) == ("Lisbon", None, None)
    assert cities(gql, who, knownAt=believed_then, retired=True) == ["Lisbon"]
    # Now it reads Lisbon closed, and still answering about the past.
    now = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(time.time() + 5)) + "Z"
    assert cities(gql, who, asOf="2024", knownAt=now) == ["Porto"]
    [past] = ok(gql(FACTS, who, asOf="2021", knownAt=now))["facts"]["items"]
    assert past["object"]["name"] == "Lisbon"
    assert past["invalidAt"].startswith("2023-01-01")


def test_a_late_fact_with_an_older_start_is_closed_itself(gql: Gql, org: dict[str, str]) -> None:
    who = org["member"]
    assert_one(gql, who, lives("Porto", "2023"))
    result = assert_one(gql, who, lives("Lisbon", "2020"))
    assert result["fact"]["invalidAt"].startswith("2023-01-01")  # the result shows it closed
    [closure] = result["closed"]
    assert closure["fact"]["id"] == result["fact"]["id"]


def test_an_explicit_end_is_never_moved_later(gql: Gql, org: dict[str, str]) -> None:
    who = org["member"]
    assert_one(gql, who, lives("Lisbon", "2020", invalidAt="2021"))
    assert assert_one(gql, who, lives("Porto", "2023"))["closed"] == []
    assert cities(gql, who, asOf="2022") == []
    # An explicit end after the next start is moved earlier, to that start.
    [closure] = assert_one(gql, who, lives("Faro", "2022-06", invalidAt="2030"))["closed"]
    assert closure["fact"]["object"]["name"] == "Faro"
    assert closure["invalidAt"].startswith("2023-01-01")


def test_equal_starts_keep_the_newer_observation(gql: Gql, org: dict[str, str]) -> None:
    who = org["member"]
    newer = lives("Porto", "2023", observedAt="2023-05-01")
    older = lives("Braga", "2023", observedAt="2023-02-01")
    assert_one(gql, who, newer)
    [closure] = assert_one(gql, who, older)["closed"]
    assert closure["fact"]["object"]["name"] == "Braga"
    assert closure["sameStart"] is True
    assert cities(gql, who, asOf="2024") == ["Porto"]


@pytest.mark.parametrize("order", ["bounded first", "open first"])
def test_a_bounded_value_inside_a_dated_start_keeps_its_interval(
    gql: Gql, org: dict[str, str], order: str
) -> None:
    who = org["member"]
    bounded = lives("Lisbon", "2019-01-15", invalidAt="2019-08-01")
    open_ = lives("Porto", "2019")  # since some time in 2019
    for item in (bounded, open_) if order == "bounded first" else (open_, bounded):
        assert assert_one(gql, who, item)["closed"] == []
    assert cities(gql, who, asOf="2019-03") == ["Lisbon"]
    assert cities(gql, who, asOf="2019-09") == ["Porto"]
    assert cities(gql, who) == ["Porto"]
    # Each keeps the interval its writer stated; the open one reads from the bounded one's end.
    stated = {
        (f["object"]["name"], f["validAt"][:10], (f["invalidAt"] or "")[:10])
        for f in ok(gql(FACTS, who, retired=True))["facts"]["items"]
    }
    assert stated == {("Lisbon", "2019-01-15", "2019-08-01"), ("Porto", "2019-01-01", "")}


def test_a_fact_without_valid_at_starts_at_its_observation(gql: Gql, org: dict[str, str]) -> None:
    who = org["member"]
    assert_one(gql, who, lives("Lisbon", "2020"))
    porto = assert_one(gql, who, lives("Porto", None, observedAt="2023-03-01"))
    assert porto["fact"]["validAt"].startswith("2023-03-01")
    assert porto["closed"][0]["invalidAt"].startswith("2023-03-01")
    assert cities(gql, who, asOf="2021") == ["Lisbon"]


def test_any_arrival_order_gives_the_same_timeline(
    gql: Gql, token: Callable[..., str], org: dict[str, str]
) -> None:
    items = [
        lives("Lisbon", "2010"),
        lives("Porto", "2014", invalidAt="2016"),
        lives("Lisbon", "2018"),
        lives("Faro", "2018", observedAt="2019-01-01"),
    ]
    timelines = set()
    for n, order in enumerate(itertools.permutations(items)):
        if n % 4:  # 6 of the 24 orders, each in a user of its own
            continue
        who = token(org["tenant"], f"u{n}", "planner", memory_scopes=ALL, sql_scopes=ALL)
        for item in order:
            assert_one(gql, who, item)
        found = ok(gql(FACTS, who, retired=True))["facts"]["items"]
        timelines.add(
            tuple(sorted((f["object"]["name"], f["validAt"], f["invalidAt"]) for f in found))
        )
    assert len(timelines) == 1, timelines
    [timeline] = timelines

    def y(year: int) -> str:
        return f"{year}-01-01T00:00:00+00:00"

    assert timeline == (
        ("Faro", y(2018), None),
        ("Lisbon", y(2010), y(2014)),  # closed where Porto starts
        ("Lisbon", y(2018), y(2018)),  # same start as Faro, the older observation: empty
        ("Porto", y(2014), y(2016)),  # its own end, before the next start
    )


def test_sixteen_concurrent_writers_leave_one_current_fact(gql: Gql, org: dict[str, str]) -> None:
    who = org["member"]
    years = list(range(2000, 2016))
    order = years[::2] + years[1::2]

    def write(year: int) -> None:
        assert_one(gql, who, lives(f"City{year}", str(year)))

    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(write, order))
    for year in years:
        assert cities(gql, who, asOf=f"{year}-06-01") == [f"City{year}"], year
    assert cities(gql, who) == ["City2015"]


async def test_harvest_and_consolidation_close_in_either_order(
    gql: Gql, org: dict[str, str], svc: Services
) -> None:
    who = org["member"]
    for i, (city, year) in enumerate((("Porto", "2023"), ("Lisbon", "2020"))):
        span = {
            "text": f"We moved to {city}.",
            "speaker": "Alice",
            "sourceId": f"s{i}",
            "facts": [lives(city, year)],
        }
        ok(gql(HARVEST, who, spans=[span], gen=1))
        outcome = await drain(svc, org["tenant"], "alice")
        assert outcome.consolidated == 1
        assert outcome.closed == i  # the second one closes the first
    assert cities(gql, who, asOf="2021") == ["Lisbon"]
    assert cities(gql, who, asOf="2024") == ["Porto"]


def test_the_ontology_read_and_dry_run_show_cardinality(gql: Gql, org: dict[str, str]) -> None:
    read = ok(gql("{ ontology { singleValued { entityType predicate spellings } } }", org["admin"]))
    assert read["ontology"]["singleValued"] == [
        {"entityType": "person", "predicate": "lives in", "spellings": ["lives in", "resides in"]},
        {
            "entityType": "employee",
            "predicate": "lives in",
            "spellings": ["lives in", "resides in"],
        },
        {"entityType": "employee", "predicate": "works at", "spellings": ["works at"]},
    ]
    dry = ok(
        gql(
            """query($items: [PlacementItemInput!]!) { placement(scope: USER, items: $items)
              { entityType singleValued } }""",
            org["member"],
            items=[{"entityType": "Employee", "subject": "Bob"}],
        )
    )
    assert dry["placement"] == [
        {"entityType": "employee", "singleValued": ["lives in", "works at"]}
    ]


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("single:", "`single:` needs"),
        ("same: lives in", "`same:` needs"),
        ("same: a = ", "`same:`"),
    ],
)
def test_a_malformed_line_is_refused_naming_it_and_changes_nothing(
    gql: Gql, org: dict[str, str], line: str, says: str
) -> None:
    bad = gql(SET_ONTOLOGY, org["admin"], m=f"status: confirmed\n\n## person\n{line}\n")
    assert bad["errors"][0]["extensions"]["code"] == "INVALID_ARGUMENT"
    assert bad["errors"][0]["message"].startswith("line 4:"), bad
    assert says in bad["errors"][0]["message"]
    read = ok(gql("{ ontology { markdown } }", org["admin"]))
    assert read["ontology"]["markdown"] == ONTOLOGY


def test_every_change_of_an_end_is_a_version(gql: Gql, org: dict[str, str]) -> None:
    """A re-assertion that ends a fact, then a supersession: each knownAt reads its own end."""
    who = org["member"]
    visit = {**lives("Lisbon", "2010"), "predicate": "visited"}  # many-valued
    a = assert_one(gql, who, visit)["fact"]
    b = assert_one(gql, who, {**lives("Porto", "2020"), "predicate": "visited"})["fact"]

    def second_after() -> str:
        second = int(time.time()) + 1
        time.sleep(second - time.time() + 0.2)
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second))

    first = second_after()
    assert_one(gql, who, {**visit, "invalidAt": "2030"})  # ends the open interval
    ended = second_after()
    supersede = """mutation($id: ID!, $by: ID!) { supersedeFact(scope: USER, id: $id, byId: $by)
      { retired { invalidAt } } }"""
    ok(gql(supersede, who, id=a["id"], by=b["id"]))
    later = second_after()

    def end_at(known: str) -> str | None:
        items = ok(gql(FACTS, who, knownAt=known, retired=True, p="visited"))["facts"]["items"]
        [lisbon] = [f for f in items if f["id"] == a["id"]]
        end: str | None = lisbon["invalidAt"]
        return end

    assert end_at(first) is None
    assert (end_at(ended) or "").startswith("2030-01-01")
    assert (end_at(later) or "").startswith("2020-01-01")
    assert cities(gql, who, asOf="2025", knownAt=ended, p="visited") == ["Lisbon", "Porto"]


@pytest.mark.parametrize("order", ["as exported", "reversed"])
def test_import_closes_single_valued_facts_in_any_order(
    gql: Gql, token: Callable[..., str], settings: Settings, tmp_path: Path, order: str
) -> None:
    # Written before the ontology declared `lives in` single-valued: both are open.
    tenant = f"rec-{uuid.uuid4().hex[:8]}"
    admin = token(tenant, "root", None, admin=True)
    who = token(tenant, "alice", "planner", memory_scopes=ALL, sql_scopes=ALL)
    for item in (lives("Lisbon", "2020"), lives("Porto", "2023"), lives("Faro", "2019-03")):
        assert_one(gql, who, item)
    assert cities(gql, who, asOf="2024") == ["Faro", "Lisbon", "Porto"]
    ok(gql(SET_ONTOLOGY, admin, m=ONTOLOGY))
    lines = ok(gql("{ exportMe { lines } }", who))["exportMe"]["lines"]
    facts = [line for line in lines if orjson.loads(line)["kind"] == "fact"]
    assert len(facts) == 3
    if order == "reversed":
        at = lines.index(facts[0])
        lines[at : at + len(facts)] = list(reversed(facts))
    ok(gql(ERASE_USER, admin, u="alice"))
    path = tmp_path / "alice.jsonl"
    path.write_text("\n".join(lines) + "\n")
    asyncio.run(import_from_file(settings, path))
    assert cities(gql, who, asOf="2019-06") == ["Faro"]
    assert cities(gql, who, asOf="2021") == ["Lisbon"]
    assert cities(gql, who, asOf="2024") == ["Porto"]


def test_a_fact_without_a_stated_start_is_never_held_and_writes_go_on(
    gql: Gql, token: Callable[..., str]
) -> None:
    # Written before the ontology declared `lives in` single-valued, so stored without a
    # validAt: its start is its observation, at midnight, which names no period (0009 is
    # about a stated start), so the bounded value ending inside that day does not hold it.
    tenant = f"rec-{uuid.uuid4().hex[:8]}"
    admin = token(tenant, "root", None, admin=True)
    who = token(tenant, "alice", "planner", memory_scopes=ALL, sql_scopes=ALL)
    porto = assert_one(gql, who, lives("Porto", None, observedAt="2019-01-01"))["fact"]
    assert porto["validAt"] is None
    ok(gql(SET_ONTOLOGY, admin, m=ONTOLOGY))
    result = assert_one(gql, who, lives("Lisbon", "2018-06", invalidAt="2019-08"))
    [closure] = result["closed"]
    assert (closure["fact"]["object"]["name"], closure["byId"]) == ("Lisbon", porto["id"])
    assert closure["invalidAt"].startswith("2019-01-01")
    # Every later write of the timeline goes through too.
    assert_one(gql, who, lives("Faro", "2024"))
    assert cities(gql, who, asOf="2019-03") == ["Porto"]
    assert cities(gql, who) == ["Faro"]
