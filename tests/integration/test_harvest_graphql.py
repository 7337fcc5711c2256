"""harvest through GraphQL on the real Neo4j: banking, provenance, idempotency, refusals."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import jwt
import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.identity import Scope
from palimpsest.identity.tokens import load_keys
from tests.integration.answers import ok
from tests.integration.conftest import Gql

HARVEST = """mutation($spans: [SpanInput!]!, $gen: Int!) {
  harvest(spans: $spans, compactionGeneration: $gen) {
    accepted duplicates spanIds compactionGeneration } }"""

SPANS_OF_TENANT = """
MATCH (p:PendingSpan {tenant_id: $tenant})
RETURN p {.*} AS span ORDER BY p.seq
"""


def refused(body: dict[str, Any]) -> str:
    assert body.get("data") is None, body
    code: str = body["errors"][0]["extensions"]["code"]
    return code


def spans_of(driver: Driver, tenant: str) -> list[dict[str, Any]]:
    records, _, _ = driver.execute_query(SPANS_OF_TENANT, tenant=tenant)
    return [dict(r["span"]) for r in records]


def turn(text: str, source: str | None = None, **more: Any) -> dict[str, Any]:
    return {"text": text, "speaker": "Alice", "role": "user", "sourceId": source, **more}


def test_spans_are_banked_in_the_user_scope_with_their_provenance(
    gql: Gql, token: Callable[..., str], tenant_id: str, neo4j_driver: Driver
) -> None:
    who = token(tenant_id, "alice", "planner", session="ses-1", run="run-1", model="m-9")
    spans = [
        turn("I moved to Lisbon last spring.", "t1", observedAt="2024-05-01T10:00:00Z"),
        turn("My cat is called Miso.", "t2"),
        {"text": "Noted, Miso it is.", "speaker": "assistant", "sourceId": "t3"},
    ]
    receipt = ok(gql(HARVEST, who, spans=spans, gen=7))["harvest"]
    assert receipt["accepted"] == 3
    assert receipt["duplicates"] == 0
    assert receipt["compactionGeneration"] == 7
    assert len(set(receipt["spanIds"])) == 3

    stored = spans_of(neo4j_driver, tenant_id)
    assert [s["id"] for s in stored] == receipt["spanIds"]  # seq keeps request order
    assert [s["text"] for s in stored] == [s["text"] for s in spans]
    first = stored[0]
    assert (first["scope"], first["owner_id"]) == ("USER", "alice")
    assert (first["session_id"], first["run_id"], first["agent_name"], first["model"]) == (
        "ses-1",
        "run-1",
        "planner",
        "m-9",
    )
    assert first["origin"] == "compaction"
    assert first["compaction_generation"] == 7
    assert first["status"] == "queued"
    assert first["observed_at"].year == 2024
    assert stored[1].get("observed_at") is None
    assert [s["speaker"] for s in stored] == ["Alice", "Alice", "assistant"]


def test_resending_the_same_run_and_source_id_is_a_counted_no_op(
    gql: Gql, token: Callable[..., str], tenant_id: str, neo4j_driver: Driver
) -> None:
    run = token(tenant_id, "alice", "planner", session="s", run="run-a")
    first = ok(gql(HARVEST, run, spans=[turn("one", "a"), turn("two", "b")], gen=1))["harvest"]
    again = ok(gql(HARVEST, run, spans=[turn("one", "a"), turn("two", "b")], gen=1))["harvest"]
    assert (again["accepted"], again["duplicates"]) == (0, 2)
    assert again["spanIds"] == first["spanIds"]

    mixed = ok(gql(HARVEST, run, spans=[turn("three", "c"), turn("two", "b")], gen=2))["harvest"]
    assert (mixed["accepted"], mixed["duplicates"]) == (1, 1)
    assert mixed["spanIds"][1] == first["spanIds"][1]

    twice = ok(gql(HARVEST, run, spans=[turn("four", "d"), turn("four", "d")], gen=2))["harvest"]
    assert (twice["accepted"], twice["duplicates"]) == (1, 1)
    assert twice["spanIds"][0] == twice["spanIds"][1]

    # Another run may use the same sourceId: it is another span.
    other = token(tenant_id, "alice", "planner", session="s", run="run-b")
    fresh = ok(gql(HARVEST, other, spans=[turn("one", "a")], gen=1))["harvest"]
    assert fresh["accepted"] == 1
    assert fresh["spanIds"][0] not in first["spanIds"]

    # A span without a sourceId has no idempotency key: each send is a new span.
    loose = ok(gql(HARVEST, run, spans=[turn("five"), turn("five")], gen=2))["harvest"]
    assert loose["accepted"] == 2

    stored = spans_of(neo4j_driver, tenant_id)
    assert len(stored) == 2 + 1 + 1 + 1 + 2
    assert [s["text"] for s in stored if s.get("source_id") == "b"] == ["two"]
    assert sorted(s["compaction_generation"] for s in stored if s.get("source_id") == "a") == [1, 1]


def runless(settings: Settings, tenant: str, user: str, session: str | None) -> str:
    """A token as a runtime may mint it: no ``run`` claim (and maybe no session)."""
    keys = load_keys(settings)
    now = int(time.time())
    claims = {"iss": keys.issuer, "aud": keys.audience, "iat": now, "exp": now + 600}
    claims |= {"tenant": tenant, "user": user, **({"session": session} if session else {})}
    assert keys.sign_key is not None
    return jwt.encode(claims, keys.sign_key, algorithm=keys.algorithm)


def test_without_a_run_claim_the_session_keys_a_span(
    gql: Gql, settings: Settings, tenant_id: str, neo4j_driver: Driver
) -> None:
    """Tokens without a run shared one idempotency space per user: a second run's span with
    the same sourceId was dropped as a duplicate."""
    monday = runless(settings, tenant_id, "alice", "ses-monday")
    tuesday = runless(settings, tenant_id, "alice", "ses-tuesday")
    first = ok(gql(HARVEST, monday, spans=[turn("monday's turn", "1")], gen=1))["harvest"]
    other = ok(gql(HARVEST, tuesday, spans=[turn("tuesday's turn", "1")], gen=1))["harvest"]
    assert (other["accepted"], other["duplicates"]) == (1, 0)
    assert other["spanIds"] != first["spanIds"]
    # A retried harvest of the same session still finds its span.
    retry = ok(gql(HARVEST, monday, spans=[turn("monday's turn", "1")], gen=1))["harvest"]
    assert (retry["accepted"], retry["duplicates"], retry["spanIds"]) == (0, 1, first["spanIds"])
    stored = spans_of(neo4j_driver, tenant_id)
    assert sorted(s["text"] for s in stored) == ["monday's turn", "tuesday's turn"]


def test_a_source_id_needs_a_run_or_a_session_to_key_it(
    gql: Gql, settings: Settings, tenant_id: str, neo4j_driver: Driver
) -> None:
    bare = runless(settings, tenant_id, "alice", None)
    body = gql(HARVEST, bare, spans=[turn("kept apart", "1")], gen=1)
    assert refused(body) == "INVALID_ARGUMENT"
    assert "spans[0].sourceId needs a run or session" in body["errors"][0]["message"]
    assert spans_of(neo4j_driver, tenant_id) == []
    loose = ok(gql(HARVEST, bare, spans=[turn("no key"), turn("no key")], gen=1))["harvest"]
    assert loose["accepted"] == 2


VALID = {"text": "a valid span first", "sourceId": "ok"}
BIG = "x" * (1024 * 1024)


@pytest.mark.parametrize(
    ("case", "spans", "gen", "code", "says"),
    [
        ("empty batch", [], 1, "INVALID_ARGUMENT", "must not be empty"),
        ("blank span", [VALID, {"text": "  \n "}], 1, "INVALID_ARGUMENT", "spans[1].text"),
        ("oversize", [VALID, {"text": BIG}], 1, "INVALID_ARGUMENT", "1048576"),
        (
            "bad date",
            [VALID, {"text": "x", "observedAt": "yesterday"}],
            1,
            "INVALID_ARGUMENT",
            "[1].observedAt",
        ),
        (
            "date without offset",
            [VALID, {"text": "x", "observedAt": "2024-05-01T10:00:00"}],
            1,
            "INVALID_ARGUMENT",
            "[1].observedAt",
        ),
        (
            "bad fact date",
            [
                VALID,
                {
                    "text": "x",
                    "facts": [
                        {
                            "subject": {"type": "person", "name": "Alice"},
                            "predicate": "lives in",
                            "objectValue": "Lisbon",
                            "validAt": "soon",
                        }
                    ],
                },
            ],
            1,
            "INVALID_ARGUMENT",
            "[1].facts[0].validAt",
        ),
        (
            "fact with a source",
            [
                VALID,
                {
                    "text": "x",
                    "facts": [
                        {
                            "subject": {"type": "person", "name": "Alice"},
                            "predicate": "likes",
                            "objectValue": "tea",
                            "source": {"chunkId": "0" * 32, "start": 0, "end": 1},
                        }
                    ],
                },
            ],
            1,
            "INVALID_ARGUMENT",
            "spans[1].facts[0].source",
        ),
        ("negative generation", [VALID], -1, "INVALID_ARGUMENT", "compactionGeneration"),
        ("too many spans", [{"text": "x"}] * 1001, 1, "INVALID_ARGUMENT", "1001 spans"),
    ],
)
def test_bad_batches_are_refused_and_change_nothing(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    neo4j_driver: Driver,
    case: str,
    spans: list[dict[str, Any]],
    gen: int,
    code: str,
    says: str,
) -> None:
    who = token(tenant_id, "alice", "planner")
    body = gql(HARVEST, who, spans=spans, gen=gen)
    assert refused(body) == code, case
    assert says in body["errors"][0]["message"], case
    assert spans_of(neo4j_driver, tenant_id) == []


@pytest.mark.parametrize(
    ("case", "user", "scopes", "says"),
    [
        ("no USER grant", "alice", [Scope.AGENT, Scope.TENANT], "not in this token"),
        ("no user id", None, None, "needs a user id"),
    ],
)
def test_harvest_needs_the_user_scope(
    gql: Gql,
    token: Callable[..., str],
    tenant_id: str,
    neo4j_driver: Driver,
    case: str,
    user: str | None,
    scopes: list[Scope] | None,
    says: str,
) -> None:
    who = token(tenant_id, user, "planner", memory_scopes=scopes)
    body = gql(HARVEST, who, spans=[VALID], gen=1)
    assert refused(body) == "FORBIDDEN", case
    assert says in body["errors"][0]["message"], case
    assert spans_of(neo4j_driver, tenant_id) == []


def test_harvest_without_a_token_is_unauthenticated(gql: Gql) -> None:
    assert refused(gql(HARVEST, None, spans=[VALID], gen=1)) == "UNAUTHENTICATED"


def test_spans_of_two_users_stay_in_their_own_scopes(
    gql: Gql, token: Callable[..., str], tenant_id: str, neo4j_driver: Driver
) -> None:
    alice = token(tenant_id, "alice", "planner", run="same-run")
    bob = token(tenant_id, "bob", "planner", run="same-run")
    a = ok(gql(HARVEST, alice, spans=[turn("alice says", "k")], gen=1))["harvest"]
    b = ok(gql(HARVEST, bob, spans=[turn("bob says", "k")], gen=1))["harvest"]
    assert a["accepted"] == b["accepted"] == 1
    assert a["spanIds"] != b["spanIds"]
    owners = {s["owner_id"]: s["text"] for s in spans_of(neo4j_driver, tenant_id)}
    assert owners == {"alice": "alice says", "bob": "bob says"}
