"""``context`` and pinned notes on the real Neo4j (issue 25 item 2, docs/reference/context.md):
the block fits its budget by the model's own tokenizer, packs pinned notes, then the current
facts about the entities the query names, then search hits, cites every piece's id, never
cuts a sentence, and never shows another scope's notes or facts."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import orjson
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from neo4j import Driver
from tokenizers import Tokenizer

from palimpsest.config import Settings
from palimpsest.jobs.portability import export_to_file, import_from_file
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.people import new_org
from tests.integration.test_erasure import ERASE_USER

CONTEXT = """query($q: String!, $b: Int!, $also: [Scope!], $asOf: Instant, $knownAt: Instant) {
  context(scope: USER, query: $q, budgetTokens: $b, alsoScopes: $also, asOf: $asOf,
          knownAt: $knownAt) {
    text tokens truncated items { kind source scope id tokens cut } } }"""
SET = """mutation($k: String!, $v: JSON!, $p: Boolean, $scope: Scope! = USER) {
  memorySet(scope: $scope, key: $k, value: $v, embed: true, pinned: $p) { key pinned } }"""
GET = """query($k: String!, $knownAt: Instant) { memory(scope: USER, key: $k, knownAt: $knownAt) {
  pinned value } }"""
SET_AT = """mutation($k: String!, $v: JSON!) {
  memorySet(scope: USER, key: $k, value: $v) { pinned updatedAt } }"""
HISTORY = """query($k: String!) { memoryHistory(scope: USER, key: $k, limit: 10) {
  items { pinned deleted } } }"""
ASSERT = """mutation($facts: [FactInput!]!, $scope: Scope! = USER) {
  assertFacts(scope: $scope, facts: $facts, place: false) { fact { id text } } }"""
IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  summary { id } } }"""
SINCE = "2020-01-01T00:00:00Z"  # the current facts hold from then on
BUDGETS = [50, 200, 1000, 8000]
ORDER = {"PINNED": 0, "FACT": 1, "HIT": 2}
_CITE = re.compile(r"^\[(?:(?:USER|AGENT|TENANT|GLOBAL)/)?(note|fact|chunk):([^\]]+)\] (.*)$", re.S)

CORE = {
    "core/identity": "The user is Grace Hopper, a rear admiral. She wrote the first compiler. "
    "She prefers answers that start with the conclusion.",
    "core/style": "Answer in plain prose without emoji. Keep each answer under five sentences.",
}
HANDBOOK = "\n\n".join(
    f"Section {i} of the handbook covers the COBOL compiler in detail. It describes pass {i} "
    f"of the compiler and how it reads the source deck. Operators check pass {i} before the "
    "nightly run. The compiler team reviews it every spring."
    for i in range(40)
)


@dataclass(frozen=True)
class World:
    grace: str  # alice's token
    bob: str  # another user of the tenant
    stranger: str  # another tenant
    facts: dict[str, str]  # alice's current facts about Grace: id -> text
    past_fact: str  # valid until 2000 only
    foreign: list[str]  # words that only other scopes hold
    tenant: str
    user: str
    admin: str


def count(settings: Settings) -> Callable[[str], int]:
    """The tokenizer of the default model, loaded here from its own file (not the server's)."""
    path = settings.model_dir / "all-MiniLM-L6-v2-onnx-int8" / "tokenizer.json"
    tok = Tokenizer.from_file(str(path))
    tok.no_truncation()
    tok.no_padding()
    return lambda text: len(tok.encode(text, add_special_tokens=False).ids)


def _facts(gql: Gql, who: str, facts: list[dict[str, Any]], scope: str = "USER") -> list[str]:
    done = ok(gql(ASSERT, who, facts=facts, scope=scope))["assertFacts"]
    return [r["fact"]["id"] for r in done]


def grace_fact(predicate: str, obj: str, text: str, **times: str) -> dict[str, Any]:
    return {
        "subject": {"type": "person", "name": "Grace Hopper"},
        "predicate": predicate,
        "object": {"type": "thing", "name": obj},
        "text": text,
        **times,
    }


@pytest.fixture(scope="module")
def world(gql: Gql, token: Callable[..., str]) -> World:
    tenant, admin = new_org(gql, token, "ctx")
    user = f"alice-{uuid.uuid4().hex[:6]}"
    alice = token(tenant, user, "planner")
    bob = token(tenant, f"bob-{uuid.uuid4().hex[:6]}", "planner")
    stranger = token(f"ctx-other-{uuid.uuid4().hex[:8]}", user, "planner")
    for key, text in CORE.items():
        ok(gql(SET, alice, k=key, v=text, p=True))
    ok(gql(SET, alice, k="misc/weather", v="It rained in Arlington on Tuesday."))
    current = [
        grace_fact("works_on", "COBOL", "Grace Hopper works on COBOL.", validAt=SINCE),
        grace_fact("serves_in", "US Navy", "Grace Hopper serves in the US Navy.", validAt=SINCE),
    ]
    ids = _facts(gql, alice, current)
    [past] = _facts(
        gql,
        alice,
        [
            grace_fact(
                "teaches_at",
                "Vassar",
                "Grace Hopper teaches mathematics at Vassar.",
                validAt="1931-01-01T00:00:00Z",
                invalidAt="2000-01-01T00:00:00Z",
            )
        ],
    )
    ok(gql(IMPORT, alice, m="# Compiler handbook\n\n" + HANDBOOK + "\n"))
    ok(gql(SET, admin, k="core/fleet", v="The tenant runs the fleet.", p=True, scope="TENANT"))
    foreign = ["zebrafinch", "quillmarsh", "lanternfen"]
    # The same names and a pinned note in Bob's scope, in the tenant's and another tenant's.
    ok(gql(SET, bob, k="core/identity", v=f"Bob's own {foreign[0]} note.", p=True))
    _facts(gql, bob, [grace_fact("likes", "Tea", f"Grace Hopper likes {foreign[1]} tea.")])
    ok(gql(SET, stranger, k="core/identity", v=f"A stranger's {foreign[2]} note.", p=True))
    _facts(gql, stranger, [grace_fact("likes", "Rum", f"Grace Hopper likes {foreign[2]} rum.")])
    texts = dict(zip(ids, (f["text"] for f in current), strict=True))
    return World(alice, bob, stranger, texts, past, foreign, tenant, user, admin)


def context(gql: Gql, who: str, q: str, budget: int, **more: Any) -> dict[str, Any]:
    found: dict[str, Any] = ok(gql(CONTEXT, who, q=q, b=budget, **more))["context"]
    return found


def check_block(block: dict[str, Any], budget: int, tokens_of: Callable[[str], int]) -> None:
    """Within the budget by an independent count; one cited, whole-sentence line per item,
    in order pinned -> facts -> hits."""
    assert block["tokens"] == tokens_of(block["text"])
    assert block["tokens"] <= budget
    lines = block["text"].split("\n") if block["text"] else []
    items = block["items"]
    assert len(lines) == len(items)
    for line, item in zip(lines, items, strict=True):
        m = _CITE.match(line)
        assert m, line
        kind, cited, body = m.groups()
        assert cited == item["id"]
        assert kind == {"NOTES": "note", "FACTS": "fact", "DOCUMENTS": "chunk"}[item["source"]]
        assert item["tokens"] == tokens_of(line)
        assert body.strip()
        assert not item["cut"] or body.rstrip()[-1] in ".!?"
    ranks = [ORDER[i["kind"]] for i in items]
    assert ranks == sorted(ranks)


@pytest.mark.parametrize("budget", BUDGETS)
def test_context_fits_its_budget_in_order_with_every_piece_cited(
    gql: Gql, world: World, settings: Settings, budget: int
) -> None:
    tokens_of = count(settings)
    block = context(gql, world.grace, "What does Grace Hopper work on in the compiler?", budget)
    check_block(block, budget, tokens_of)
    kinds = [i["kind"] for i in block["items"]]
    if budget >= 1000:  # room for every part
        assert kinds.count("PINNED") == len(CORE)
        assert {i["id"] for i in block["items"] if i["kind"] == "FACT"} == set(world.facts)
        assert "HIT" in kinds
    if budget == 8000:
        # Everything found fits: nothing left out, nothing cut.
        assert any(i["source"] == "DOCUMENTS" for i in block["items"])
        texts = {i["id"]: i for i in block["items"]}
        for key, text in CORE.items():
            assert f"[note:{key}] {text}" in block["text"].split("\n")
            assert not texts[key]["cut"]
    if budget == 50:
        assert block["truncated"]
        assert kinds
        assert kinds[0] == "PINNED"


def test_a_piece_that_does_not_fit_is_cut_at_a_sentence_or_left_out(
    gql: Gql, world: World, settings: Settings
) -> None:
    tokens_of = count(settings)
    whole = tokens_of(f"[note:core/identity] {CORE['core/identity']}")
    first = "The user is Grace Hopper, a rear admiral."
    budget = tokens_of(f"[note:core/identity] {first}") + 2  # one sentence, not two
    assert budget < whole
    block = context(gql, world.grace, "Grace Hopper", budget)
    check_block(block, budget, tokens_of)
    assert block["truncated"]
    assert block["text"].split("\n")[0] == f"[note:core/identity] {first}"
    assert block["items"][0]["cut"]
    # Too small for any whole sentence: nothing at all, never a part of one.
    tiny = context(gql, world.grace, "Grace Hopper", 3)
    assert tiny == {"text": "", "tokens": 0, "truncated": True, "items": []}


def test_only_current_facts_unless_as_of_and_never_another_scopes(
    gql: Gql, world: World, settings: Settings
) -> None:
    block = context(gql, world.grace, "Tell me about Grace Hopper", 8000)
    facts = [i["id"] for i in block["items"] if i["kind"] == "FACT"]
    assert set(facts) == set(world.facts)
    assert world.past_fact not in block["text"]
    then = context(
        gql, world.grace, "Tell me about Grace Hopper", 8000, asOf="1990-06-01T00:00:00Z"
    )
    assert [i["id"] for i in then["items"] if i["kind"] == "FACT"] == [world.past_fact]
    # Bob (same tenant) and a stranger (another tenant) hold the same names and pinned
    # notes under the same key: none of their notes or facts ever shows.
    for also in (None, ["TENANT"]):
        seen = context(gql, world.grace, "Grace Hopper core identity tea rum", 8000, also=also)
        assert not any(word in seen["text"] for word in world.foreign)
        assert {i["scope"] for i in seen["items"]} <= {"USER", "TENANT"}
        # The tenant's own pinned note comes only when asked for, cited with its scope.
        assert ("[TENANT/note:core/fleet] The tenant runs the fleet." in seen["text"]) == bool(also)
    bobs = context(gql, world.bob, "Grace Hopper", 8000)
    assert world.foreign[0] in bobs["text"]
    assert "rear admiral" not in bobs["text"]
    assert not set(world.facts) & {i["id"] for i in bobs["items"]}


def test_pinned_is_kept_when_omitted_unpinned_by_false_and_part_of_the_version(
    gql: Gql, world: World
) -> None:
    key = f"core/pin-{uuid.uuid4().hex[:6]}"
    assert ok(gql(SET, world.grace, k=key, v="Pinned first.", p=True))["memorySet"]["pinned"]
    kept = ok(gql(SET_AT, world.grace, k=key, v="Still pinned."))["memorySet"]
    assert kept["pinned"] is True  # omitted: the key keeps its pin
    pinned_then = kept["updatedAt"]
    assert key in _pinned(context(gql, world.grace, "pinned", 8000))
    unpinned = ok(gql(SET, world.grace, k=key, v="Not pinned now.", p=False))["memorySet"]
    assert unpinned["pinned"] is False
    assert ok(gql(GET, world.grace, k=key))["memory"]["pinned"] is False
    history = ok(gql(HISTORY, world.grace, k=key))["memoryHistory"]["items"]
    assert [v["pinned"] for v in history] == [False, True, True]
    then = ok(gql(GET, world.grace, k=key, knownAt=pinned_then))["memory"]
    assert then == {"pinned": True, "value": "Still pinned."}
    assert key not in _pinned(context(gql, world.grace, "pinned", 8000))
    assert key in _pinned(context(gql, world.grace, "pinned", 8000, knownAt=pinned_then))
    # A later write that says nothing of the pin keeps the key unpinned.
    again = ok(gql(SET, world.grace, k=key, v="Still not pinned."))["memorySet"]
    assert again["pinned"] is False


def _pinned(block: dict[str, Any]) -> list[str]:
    return [i["id"] for i in block["items"] if i["kind"] == "PINNED"]


@pytest.mark.parametrize("budget", [0, -5, 16_001])
def test_a_bad_budget_is_refused_and_nothing_is_written(
    gql: Gql, world: World, neo4j_driver: Driver, budget: int
) -> None:
    before = _fingerprint(neo4j_driver, world.tenant)
    body = gql(CONTEXT, world.grace, q="Grace Hopper", b=budget)
    assert body["data"] is None
    [error] = body["errors"]
    assert error["extensions"]["code"] == "INVALID_ARGUMENT"
    assert "budgetTokens" in error["message"]
    assert _fingerprint(neo4j_driver, world.tenant) == before


def test_scopes_are_refused_exactly_as_recall_refuses_them(gql: Gql, world: World) -> None:
    recall = 'query { recall(scope: GLOBAL, query: "x") { scopes } }'
    ctx = 'query { context(scope: GLOBAL, query: "x") { tokens } }'
    want = gql(recall, world.grace)["errors"][0]
    got = gql(ctx, world.grace)["errors"][0]
    assert got["extensions"] == want["extensions"]
    assert got["message"] == want["message"]


def test_export_and_import_carry_the_pin(
    gql: Gql, world: World, token: Callable[..., str], settings: Settings, tmp_path: Path
) -> None:
    tenant, admin = new_org(gql, token, "ctx-port")
    user = f"carol-{uuid.uuid4().hex[:6]}"
    carol = token(tenant, user, "planner")
    ok(gql(SET, carol, k="core/a", v="Carol is pinned.", p=True))
    ok(gql(SET, carol, k="core/a", v="Carol is pinned again."))  # a pinned past version too
    ok(gql(SET, carol, k="misc/b", v="Carol is not pinned."))
    out = tmp_path / "carol.jsonl"
    asyncio.run(export_to_file(settings, tenant, user, out))
    records = [orjson.loads(line) for line in out.read_text().splitlines()]
    pins = {
        (r["kind"], r["props"]["key"]): r["props"].get("pinned")
        for r in records
        if r["kind"] in ("memory", "memory_version")
    }
    assert pins == {
        ("memory", "core/a"): True,
        ("memory", "misc/b"): None,
        ("memory_version", "core/a"): True,
    }
    ok(gql(ERASE_USER, admin, u=user))
    assert ok(gql(GET, carol, k="core/a"))["memory"] is None
    asyncio.run(import_from_file(settings, out))
    assert ok(gql(GET, carol, k="core/a"))["memory"]["pinned"] is True
    assert ok(gql(GET, carol, k="misc/b"))["memory"]["pinned"] is False
    items = context(gql, carol, "Carol", 1000)["items"]
    assert [i["id"] for i in items if i["kind"] == "PINNED"] == ["core/a"]


def _fingerprint(driver: Driver, tenant: str) -> list[Any]:
    records, _, _ = driver.execute_query(
        """MATCH (n {tenant_id: $t})
        RETURN labels(n) AS l, count(*) AS c, max(n.updated_at) AS u, max(n.touched_at) AS t
        ORDER BY l""",
        t=tenant,
    )
    return [tuple(r) for r in records]


async def test_the_mcp_tool_answers_and_refuses_as_graphql_does(
    live_server_url: str, gql: Gql, world: World
) -> None:
    query = "What does Grace Hopper work on?"
    via_graphql = context(gql, world.grace, query, 300)
    headers = {"Authorization": f"Bearer {world.grace}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=60) as http,
        Client(streamable_http_client(f"{live_server_url}/mcp", http_client=http)) as client,
    ):
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["context"].annotations is not None
        assert tools["context"].annotations.read_only_hint is True
        result = await client.call_tool("context", {"query": query, "budget_tokens": 300})
        assert not result.is_error, result.structured_content
        got = result.structured_content
        assert got is not None
        assert got["text"] == via_graphql["text"]
        assert (got["tokens"], got["truncated"]) == (
            via_graphql["tokens"],
            via_graphql["truncated"],
        )
        assert [(i["kind"].upper(), i["id"]) for i in got["items"]] == [
            (i["kind"], i["id"]) for i in via_graphql["items"]
        ]
        for arguments, graphql in (
            (
                {"query": "x", "budget_tokens": 0},
                '{ context(scope: USER, query: "x", budgetTokens: 0) { tokens } }',
            ),
            (
                {"query": "x", "scope": "GLOBAL"},
                '{ context(scope: GLOBAL, query: "x") { tokens } }',
            ),
            ({"query": " "}, '{ context(scope: USER, query: " ") { tokens } }'),
        ):
            refused = await client.call_tool("context", arguments)
            assert refused.is_error
            assert refused.structured_content is not None
            code = refused.structured_content["error"]["code"]
            assert {e["extensions"]["code"] for e in gql(graphql, world.grace)["errors"]} == {code}


def _cli(url: str, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The CLI as a shell runs it: a quick look over the client on the API at ``url``."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "palimpsest"), *args],
        env={**os.environ, "PALIMPSEST_RUN_TOKEN": token, "PALIMPSEST_SERVER_URL": url},
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_the_cli_prints_the_same_block(live_server_url: str, gql: Gql, world: World) -> None:
    url, query = live_server_url, "What does Grace Hopper work on?"
    run = _cli(url, world.grace, "context", query, "--budget", "300")
    assert run.returncode == 0, run.stderr
    block = context(gql, world.grace, query, 300)
    assert run.stdout == block["text"] + "\n"
    assert f"{block['tokens']} tokens in {len(block['items'])} pieces" in run.stderr
    as_json = _cli(url, world.grace, "context", query, "--budget", "300", "--json")
    assert as_json.returncode == 0, as_json.stderr
    printed = orjson.loads(as_json.stdout)
    assert printed["text"] == block["text"]
    assert printed["items"] == [
        {**i, "kind": i["kind"].lower(), "source": i["source"].lower()} for i in block["items"]
    ]
    # Over the API: with no server at the URL the quick look fails, it does not read Neo4j.
    offline = _cli("http://127.0.0.1:9", world.grace, "context", query)
    assert offline.returncode != 0
    assert "Traceback" not in offline.stderr
    bad = _cli(url, world.grace, "context", query, "--budget", "0")
    assert bad.returncode == 1
    assert "budgetTokens must be between 1 and" in bad.stderr
    assert "Traceback" not in bad.stderr
    # `memory set --pinned` pins a note `context` then packs first.
    pinned = _cli(
        url, world.grace, "memory", "set", "core/shell", "Pinned from a shell.", "--pinned"
    )
    assert pinned.returncode == 0, pinned.stderr
    assert ok(gql(GET, world.grace, k="core/shell"))["memory"]["pinned"] is True
    ok(gql(SET, world.grace, k="core/shell", v="Unpinned again.", p=False))


FLOORED = """query($q: String!, $b: Int!, $min: Float) {
  context(scope: USER, query: $q, budgetTokens: $b, minScore: $min) {
    text tokens truncated items { kind source scope id tokens cut } } }"""


def test_a_question_about_nothing_held_packs_no_hits_above_the_floor(
    gql: Gql, world: World, settings: Settings
) -> None:
    """Before the floor, 2,000 tokens packed the whole scope for a question it holds nothing
    about (issue 45 item 5); the pinned notes still come, they are not hits."""
    q = "When is the dentist appointment?"
    block = ok(gql(FLOORED, world.grace, q=q, b=2000))["context"]
    check_block(block, 2000, count(settings))
    assert {i["kind"] for i in block["items"]} == {"PINNED"}
    unfloored = ok(gql(FLOORED, world.grace, q=q, b=2000, min=-1.0))["context"]
    assert sum(i["kind"] == "HIT" for i in unfloored["items"]) > 10
    # A question the handbook answers keeps its hits above the default floor.
    asked = ok(gql(FLOORED, world.grace, q="How does the COBOL compiler read the deck?", b=2000))
    assert any(i["source"] == "DOCUMENTS" for i in asked["context"]["items"])


@pytest.mark.parametrize("floor", [1.5, -2.0])
def test_a_bad_min_score_is_refused_and_nothing_is_written(
    gql: Gql, world: World, neo4j_driver: Driver, floor: float
) -> None:
    before = _fingerprint(neo4j_driver, world.tenant)
    body = gql(FLOORED, world.grace, q="Grace Hopper", b=200, min=floor)
    assert body["data"] is None
    [error] = body["errors"]
    assert error["extensions"]["code"] == "INVALID_ARGUMENT"
    assert "minScore" in error["message"]
    assert _fingerprint(neo4j_driver, world.tenant) == before


def test_a_piece_with_line_breaks_is_one_escaped_line(
    gql: Gql, token: Callable[..., str], settings: Settings
) -> None:
    who = token(f"ctx-lines-{uuid.uuid4().hex[:8]}", "dora", "planner")
    ok(gql(SET, who, k="core/steps", v="Dora's steps:\n- boil water\n- add C:\\tea", p=True))
    kettle = (
        "# Kettle\n\nDora boils water in the kettle,\nthen adds the tea.\n\n"
        "```\nboil()\nbrew()\n```\n"
    )
    ok(gql(IMPORT, who, m=kettle))
    block = ok(gql(FLOORED, who, q="How does Dora make tea in the kettle?", b=2000))["context"]
    check_block(block, 2000, count(settings))
    lines = block["text"].split("\n")
    assert lines[0] == "[note:core/steps] Dora's steps:\\n- boil water\\n- add C:\\\\tea"
    assert any(
        line.endswith(" Dora boils water in the kettle,\\nthen adds the tea.") for line in lines
    )
    assert any("boil()\\nbrew()" in line for line in lines), lines
