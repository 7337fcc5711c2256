"""The model judge over a local host speaking each protocol: one call per batch of pairs in
a strict schema, verdicts checked before they are kept, failures and the token cap counted,
and pairs left without a verdict staying pending."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import SecretStr

from palimpsest.config import Settings
from palimpsest.extraction import ModelJudge, load_judge
from palimpsest.extraction.judge import SCHEMA, TOOL, check
from palimpsest.schema.pairs import PairFact, PairVerdict, PendingPair
from tests.model_host import (
    ModelHost,
    Reply,
    Seen,
    chat_completion,
    message_text,
    message_tool_use,
    model_host,
    openai_error,
    verdicts_answer,
)

SAID = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)


def pair(n: int, older: str = "Paris", newer: str = "Berlin") -> PendingPair:
    def side(city: str) -> PairFact:
        return PairFact(f"Alice lives in {city}", "Alice", "lives in", city, None, None, SAID)

    return PendingPair(f"{n:032x}", side(older), side(newer))


class Cap:
    def __init__(self, used: int = 0) -> None:
        self.used = used
        self.spent: list[int] = []

    async def tokens_today(self) -> int:
        return self.used

    async def spend_tokens(self, tokens: int) -> int:
        self.spent.append(tokens)
        self.used += tokens
        return self.used


@pytest.fixture
def host() -> Iterator[ModelHost]:
    with model_host() as h:
        yield h


def judge(host: ModelHost, protocol: str = "openai", **env: object) -> ModelJudge:
    settings = Settings(
        model_protocol=protocol,
        model_url=host.url + ("/v1" if protocol == "openai" else ""),
        model_name="local-model",
        model_api_key=SecretStr("sk-secret-abcdef0123456789"),
        model_max_attempts=2,
        **env,  # type: ignore[arg-type]
    )
    found = load_judge(settings)
    assert isinstance(found, ModelJudge)
    found.client._backoff = 0.01
    return found


def asked(seen: Seen) -> dict[str, Any]:
    """The document the judge sent (the last user message, in either protocol)."""
    shown: dict[str, Any] = json.loads(seen.body["messages"][-1]["content"])
    return shown


def test_a_judge_with_a_url_that_is_not_http_refuses_to_start() -> None:
    with pytest.raises(ValueError, match="PALIMPSEST_MODEL_URL must be an http"):
        Settings(model_url="ftp://127.0.0.1/v1", model_name="m")
    Settings(model_url="ftp://127.0.0.1/v1", model_name="m", judge_conflicts=False)


def test_no_judge_without_a_model_or_when_switched_off() -> None:
    assert load_judge(Settings()) is None
    on = {"model_url": "http://127.0.0.1:1/v1", "model_name": "m"}
    assert load_judge(Settings(**on)) is not None  # type: ignore[arg-type]
    assert load_judge(Settings(judge_conflicts=False, **on)) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
async def test_one_call_per_batch_in_the_strict_schema_and_verdicts_kept(
    host: ModelHost, protocol: str
) -> None:
    def answer(seen: Seen) -> Reply:
        ids = [p["id"] for p in asked(seen)["pairs"]]
        verdicts = verdicts_answer(*((i, "conflict", "Two cities at once.") for i in ids))
        if protocol == "openai":
            return chat_completion(verdicts, usage=(300, 40))
        return message_tool_use(verdicts, usage=(300, 40), tool=TOOL.name)

    host.answer = answer
    j = judge(host, protocol, judge_pairs_per_call=2)
    pairs = [pair(1), pair(2), pair(3)]
    judged = await j.judge(pairs, None)

    assert len(host.seen) == 2  # 2 + 1 pairs
    assert judged.counts["judge_calls"] == 2
    assert set(judged.rulings) == {p.id for p in pairs}
    assert all(r.verdict is PairVerdict.CONFLICT for r in judged.rulings.values())
    assert judged.judged_by == "model:judge_v1:local-model"
    assert judged.counts["tokens_in"] == 600
    assert judged.counts["tokens_out"] == 80
    first = host.seen[0].body
    if protocol == "openai":
        assert first["response_format"]["json_schema"] == {
            "name": "record_verdicts",
            "strict": True,
            "schema": SCHEMA,
        }
    else:
        assert first["tool_choice"] == {"type": "tool", "name": "record_verdicts"}
        assert first["tools"][0]["input_schema"] == SCHEMA
    shown = asked(host.seen[0])
    assert shown["pairs"][0]["older"]["object"] == "Paris"
    assert shown["pairs"][0]["newer"]["text"] == "Alice lives in Berlin"


async def test_a_verdict_not_asked_unknown_or_repeated_is_dropped_and_the_pair_stays_pending(
    host: ModelHost,
) -> None:
    a, b, c = pair(1), pair(2), pair(3)
    host.replies.append(
        chat_completion(
            verdicts_answer(
                (a.id, "same", "Both say Paris."),
                (a.id, "conflict", "Second thoughts."),
                (b.id, "contradiction", "Not a verdict of the schema."),
                ("f" * 32, "conflict", "A pair of someone else."),
            )
        )
    )
    judged = await judge(host).judge([a, b, c], None)
    assert set(judged.rulings) == {a.id}
    assert judged.rulings[a.id].verdict is PairVerdict.SAME  # the first verdict holds
    assert judged.counts["judge_dropped"] == 3
    assert judged.failed == []


def test_check_counts_each_reason() -> None:
    asked_ids = {"p1"}
    kept, dropped = check({"verdicts": [1, {"pair": "p1", "verdict": "same"}]}, asked_ids)
    assert kept == {}
    assert dropped == {"malformed": 2}
    kept, dropped = check({"facts": []}, asked_ids)
    assert kept == {}
    assert dropped == {"malformed": 1}
    long = "x " * 1000
    kept, _ = check({"verdicts": [{"pair": "p1", "verdict": "same", "reason": long}]}, asked_ids)
    assert len(kept["p1"].reason) == 500


async def test_a_failing_model_leaves_the_pairs_pending_and_counted(host: ModelHost) -> None:
    host.answer = lambda _: message_text("I think they conflict.")  # prose, twice
    j = judge(host, "anthropic")
    judged = await j.judge([pair(1), pair(2)], None)
    assert judged.rulings == {}
    assert judged.failed == [pair(1).id, pair(2).id]
    assert judged.counts["judge_failed"] == 2
    assert len(host.seen) == 2  # retried once, then given up


async def test_a_wrong_key_fails_at_once_without_the_key_in_the_log(
    host: ModelHost, caplog: pytest.LogCaptureFixture
) -> None:
    host.replies.append(
        openai_error(401, "invalid_request_error", "Incorrect API key sk-secret-abcdef0123456789")
    )
    judged = await judge(host).judge([pair(1)], None)
    assert judged.failed == [pair(1).id]
    assert len(host.seen) == 1
    assert "sk-secret" not in caplog.text
    assert "HTTP 401" in caplog.text


async def test_tokens_count_against_the_tenants_cap_and_a_spent_day_refuses(
    host: ModelHost,
) -> None:
    host.answer = lambda seen: chat_completion(
        verdicts_answer(*((p["id"], "compatible", "In turn.") for p in asked(seen)["pairs"])),
        usage=(700, 50),
    )
    j = judge(host, max_extraction_tokens_per_day=1000, judge_pairs_per_call=1)
    cap = Cap(used=200)
    judged = await j.judge([pair(1), pair(2), pair(3)], cap)
    # The first call spends 750 (950 in all), the second passes the cap, the third is refused.
    assert cap.spent == [750, 750]
    assert len(host.seen) == 2
    assert set(judged.rulings) == {pair(1).id, pair(2).id}
    assert judged.counts["judge_refused"] == 1
