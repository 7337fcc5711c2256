"""docs/extraction.md's two examples, run: each block's settings (its ``export`` lines), with
its host's URL pointed at a local host speaking that protocol (tests/model_host.py), make
the extractors ``palimpsest consolidate`` would run; a harvested sentence consolidated by
them becomes the facts the page promises."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest

from palimpsest.config import Settings
from palimpsest.extraction import load_extractors
from palimpsest.resolvers.services import Services
from tests.docs_examples import DOCS, code_blocks
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.cycle import config, drain, harvest
from tests.model_host import (
    Seen,
    candidate,
    chat_completion,
    facts_answer,
    message_tool_use,
    model_host,
)

PAGE = DOCS / "extraction.md"
EXPORT = re.compile(r"^export PALIMPSEST_(\w+)=(.*)$")
SENTENCE = "I moved to Berlin last month and I work at Siemens now."
FACTS = """query { facts(scope: USER, subject: {type: "person", name: "Alice"}) {
  items { predicate object { name } provenance { judgedBy } } } }"""
ANSWER = facts_answer(
    candidate("t1", "I moved to Berlin", ("person", "I"), "lives in", ("city", "Berlin")),
    candidate("t1", "I work at Siemens", ("person", "I"), "works at", ("organization", "Siemens")),
)


def examples() -> list[dict[str, str]]:
    blocks = [
        b
        for b in code_blocks(PAGE)
        if "run by tests/integration/test_extraction_docs.py" in b.before
    ]
    out = []
    for b in blocks:
        found = [EXPORT.match(line) for line in b.code.splitlines()]
        out.append({m[1].lower(): m[2].strip('"') for m in found if m})
    return out


def test_the_page_has_one_example_per_protocol() -> None:
    assert sorted(e["model_protocol"] for e in examples()) == ["anthropic", "openai"]


@pytest.mark.parametrize("example", examples(), ids=lambda e: e["model_protocol"])
async def test_the_example_draws_facts_from_a_harvested_sentence(
    gql: Gql, token: Callable[..., str], svc: Services, example: dict[str, str]
) -> None:
    with model_host() as host:
        protocol = example["model_protocol"]

        def answer(seen: Seen) -> Any:
            if protocol == "openai":
                return chat_completion(ANSWER)
            return message_tool_use(ANSWER)

        host.answer = answer
        # The block's URL, on the local host: the same path, so the suffix rule is tested.
        path = urlsplit(example["model_url"]).path
        given = {**example, "model_url": host.url + path}
        if given.get("model_api_key", "").startswith("$"):
            given["model_api_key"] = "sk-from-the-environment"
        settings = Settings(**given)  # type: ignore[arg-type]
        tenant = f"xd-{uuid.uuid4().hex[:10]}"
        alice = token(tenant, "alice", "planner")
        harvest(gql, alice, [SENTENCE])
        outcome = await drain(svc, tenant, "alice", config("docs", *load_extractors(settings)))
        assert outcome.consolidated == 1
        assert outcome.counted("facts") == 2
        [seen] = host.seen
        assert seen.path == ("/v1/chat/completions" if protocol == "openai" else "/v1/messages")
        found = ok(gql(FACTS, alice))["facts"]["items"]
        assert sorted(f["object"]["name"] for f in found) == ["Berlin", "Siemens"]
        assert {f["provenance"]["judgedBy"] for f in found} == {
            f"model:extract_v1:{example['model_name']}"
        }
