"""The model extractor over a local host: one call per conversation part, the scope shown
for banding, checked facts kept, and a failing model leaving its turns without facts."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Iterator
from datetime import UTC, datetime

import pytest
from pydantic import SecretStr

from palimpsest.config import Settings
from palimpsest.extraction import ModelExtractor, load_extractors
from palimpsest.extraction.extractor import MAX_CALL_CHARS, MAX_KNOWN_FACTS, parts
from palimpsest.ontology import Ontology, parse_ontology
from palimpsest.ontology.extractors import (
    BandingView,
    KnownEntity,
    KnownFact,
    MentionsExtractor,
    ProvidedExtractor,
    Turn,
)
from tests.model_host import (
    ModelHost,
    Reply,
    candidate,
    chat_completion,
    facts_answer,
    model_host,
    openai_error,
)

SAID = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
ONTOLOGY = parse_ontology("status: confirmed\n\n## person\nsingle: lives in\n\n## city\n")


class View:
    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    async def entities_named(self, names: Collection[str]) -> list[KnownEntity]:
        return [KnownEntity("person", "Alice", "alice")] if "alice" in names else []

    async def ontology(self) -> Ontology | None:
        return ONTOLOGY

    async def facts_about(self, names: Collection[str], limit: int) -> list[KnownFact]:
        self.asked.append(sorted(names))
        return [KnownFact("person", "Alice", "lives in", "city", "Paris", None)]


def turn(n: int, text: str, session: str = "chat-1") -> Turn:
    return Turn(f"{n:032x}", f"Alice: {text}", 7, "Alice", "user", SAID, session)


@pytest.fixture
def host() -> Iterator[ModelHost]:
    with model_host() as h:
        yield h


def extractor(host: ModelHost, **env: object) -> ModelExtractor:
    settings = Settings(
        extractors="mentions,provided,model",
        model_url=host.url + "/v1",
        model_name="local-model",
        model_api_key=SecretStr("sk-secret-abcdef0123456789"),
        model_max_attempts=2,
        **env,  # type: ignore[arg-type]
    )
    loaded = load_extractors(settings)
    assert [type(e) for e in loaded[:2]] == [MentionsExtractor, ProvidedExtractor]
    found = loaded[2]
    assert isinstance(found, ModelExtractor)
    return found


async def test_the_model_sees_the_turns_ontology_and_known_facts_and_its_facts_are_kept(
    host: ModelHost,
) -> None:
    moved = candidate("t2", "I moved to Berlin", ("person", "I"), "lives in", ("city", "Berlin"))
    host.replies.append(chat_completion(facts_answer(moved), usage=(500, 40)))
    view = View()
    assert isinstance(view, BandingView)
    turns = [turn(1, "Hello there."), turn(2, "I moved to Berlin last month.")]
    found = await extractor(host).extract(turns, view)

    [(turn_id, draft)] = found.facts
    assert turn_id == turns[1].id
    assert draft.extracted_by == "model:extract_v1:local-model"
    assert found.counts == {"calls": 1, "tokens_in": 500, "tokens_out": 40, "facts": 1}
    [seen] = host.seen  # one call for the conversation's batch
    shown = json.loads(seen.body["messages"][1]["content"])
    assert [t["id"] for t in shown["turns"]] == ["t1", "t2"]
    assert shown["turns"][1] == {
        "id": "t2",
        "speaker": "Alice",
        "observedAt": "2026-12-01T09:30:00+00:00",
        "text": "I moved to Berlin last month.",
    }
    assert shown["ontology"]["declared"] is True
    assert {"name": "person", "aliases": [], "single": ["lives in"]} in shown["ontology"]["types"]
    assert shown["known"][0]["object"] == {"type": "city", "name": "Paris"}
    assert view.asked == [["alice"]]
    assert "extract facts" in seen.body["messages"][0]["content"]


async def test_a_failing_model_leaves_the_turns_without_facts_counted(host: ModelHost) -> None:
    host.answer = lambda _: openai_error(503, "server_error", "The server is overloaded")
    found = await extractor(host).extract([turn(1, "I live in Rome.")], View())
    assert found.facts == []
    assert found.counts == {"calls": 1, "extraction_failed": 1}
    assert len(host.seen) == 2  # both attempts


async def test_dropped_candidates_are_counted_by_reason(host: ModelHost) -> None:
    bad = candidate("t1", "I live in Oslo", ("person", "I"), "lives in", ("city", "Oslo"))
    host.replies.append(chat_completion(facts_answer(bad)))
    found = await extractor(host).extract([turn(1, "I live in Rome.")], View())
    assert found.facts == []
    assert found.counts["dropped"] == 1
    assert found.counts["dropped_quote_not_in_turns"] == 1


def test_one_call_per_session_and_long_sessions_are_split() -> None:
    long = "word " * (MAX_CALL_CHARS // 10)
    turns = [turn(1, "a", "s1"), turn(2, "b", "s2"), turn(3, long, "s1"), turn(4, long, "s1")]
    assert [[t.id[-1] for t in p] for p in parts(turns)] == [["1", "3"], ["4"], ["2"]]


def test_settings_that_name_model_without_url_or_name_refuse_to_start() -> None:
    with pytest.raises(ValueError, match="PALIMPSEST_MODEL_URL must be set"):
        Settings(extractors="mentions,model", model_name="m")
    with pytest.raises(ValueError, match="PALIMPSEST_MODEL_NAME must be set"):
        Settings(extractors="mentions,model", model_url="http://127.0.0.1:1")
    with pytest.raises(ValueError, match="http:// or https://"):
        Settings(extractors="model", model_url="127.0.0.1:1", model_name="m")
    Settings(extractors="mentions,provided", model_url=None)  # off: nothing needed


def test_the_key_is_in_no_repr(host: ModelHost) -> None:
    found = extractor(host)
    assert "sk-secret" not in repr(found)
    assert "sk-secret" not in repr(found.client)


class Ledger(View):
    def __init__(self, used: int) -> None:
        super().__init__()
        self.used = used
        self.spent: list[int] = []

    async def tokens_today(self) -> int:
        return self.used

    async def spend_tokens(self, tokens: int) -> int:
        self.spent.append(tokens)
        self.used += tokens
        return self.used


async def test_the_daily_token_cap_refuses_a_call_once_spent(
    host: ModelHost, caplog: pytest.LogCaptureFixture
) -> None:
    host.answer = lambda _: chat_completion(facts_answer(), usage=(300, 20))
    model = extractor(host, max_extraction_tokens_per_day=500)
    ledger = Ledger(used=0)
    first = await model.extract([turn(1, "I live in Rome.")], ledger)
    assert first.counts["tokens_in"] == 300
    assert ledger.spent == [320]
    second = await model.extract([turn(2, "I live in Oslo.")], ledger)
    assert second.counts["tokens_in"] == 300  # 320 < 500: still allowed
    third = await model.extract([turn(3, "I live in Lima.")], ledger)
    assert third.counts == {"extraction_refused": 1}
    assert len(host.seen) == 2  # the third call was never made
    assert "640 tokens spent today, the tenant's cap is 500" in caplog.text


async def test_without_a_cap_nothing_is_counted_against_the_tenant(host: ModelHost) -> None:
    ledger = Ledger(used=10**9)
    found = await extractor(host).extract([turn(1, "I live in Rome.")], ledger)
    assert "extraction_refused" not in found.counts
    assert ledger.spent == []


async def test_a_slow_model_is_given_up_within_its_share_of_the_lease(host: ModelHost) -> None:
    host.answer = lambda _: Reply(200, b"{}", delay=2.0)
    model = extractor(host, consolidate_lease_seconds=0.6)  # half of it: 0.3 s
    assert model.budget_seconds == pytest.approx(0.3)
    started = time.monotonic()
    found = await model.extract([turn(1, "I live in Rome.")], View())
    assert time.monotonic() - started < 1.5
    assert found.counts == {"calls": 1, "extraction_failed": 1}


def test_the_lease_a_worker_was_given_bounds_its_extraction() -> None:
    settings = Settings(extractors="model", model_url="http://127.0.0.1:1", model_name="m")
    [model] = load_extractors(settings, lease_seconds=120)
    assert isinstance(model, ModelExtractor)
    assert model.budget_seconds == 60


class CountingView:
    """Two people named in two conversations: counts the reads a batch makes."""

    def __init__(self) -> None:
        self.named: list[set[str]] = []
        self.about: list[tuple[list[str], int]] = []

    async def entities_named(self, names: Collection[str]) -> list[KnownEntity]:
        self.named.append(set(names))
        people = [KnownEntity("person", "Alice", "alice"), KnownEntity("person", "Bob", "bob")]
        return [e for e in people if e.norm in names]

    async def ontology(self) -> Ontology | None:
        return ONTOLOGY

    async def facts_about(self, names: Collection[str], limit: int) -> list[KnownFact]:
        self.about.append((sorted(names), limit))
        return [
            KnownFact("person", "Bob", "lives in", "city", "Oslo", None),
            KnownFact("person", "Alice", "lives in", "city", "Paris", None),
        ]


async def test_a_batch_reads_the_scope_once_and_each_part_is_shown_its_own_facts(
    host: ModelHost,
) -> None:
    host.answer = lambda _: chat_completion(facts_answer())
    view = CountingView()
    turns = [
        Turn(f"{1:032x}", "Carol: I saw Bob.", 7, "Carol", "user", SAID, "chat-1"),
        Turn(f"{2:032x}", "Dan: Alice called.", 5, "Dan", "user", SAID, "chat-2"),
    ]
    await extractor(host).extract(turns, view)
    assert len(host.seen) == 2  # a call per conversation
    # One read of the entities and one of their facts for the whole batch, not one per call.
    [named] = view.named
    assert {"bob", "alice"} <= named
    assert view.about == [(["alice", "bob", "carol", "dan"], 2 * MAX_KNOWN_FACTS)]
    shown = {}
    for seen in host.seen:
        document = json.loads(seen.body["messages"][1]["content"])
        speaker = document["turns"][0]["speaker"]
        shown[speaker] = [f["subject"]["name"] for f in document["known"]]
    assert shown == {"Carol": ["Bob"], "Dan": ["Alice"]}
