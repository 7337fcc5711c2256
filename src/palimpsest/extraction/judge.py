"""The model judge: pairs of close facts (``schema.pairs``) asked about, one call per batch.

The consolidator hands it the pairs its fact writes recorded (two facts of one subject and
predicate, close in meaning, not merged). Each call shows up to ``pairs_per_call`` pairs and
asks, in a strict JSON schema (``SCHEMA``), for a verdict per pair: ``same``, ``conflict`` or
``compatible``, with a short reason. Nothing in the answer is trusted: a verdict for a pair
that was not asked, an unknown verdict, a second verdict for one pair or a malformed item is
dropped and counted; a pair left without a verdict stays pending. A failed call (after the
client's retries) leaves its pairs pending, counted as ``judge_failed``. A verdict is a
report: it never closes or deletes a fact.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from functools import cache
from importlib.resources import files
from typing import Any

from palimpsest.config import Settings
from palimpsest.extraction import metrics, wire
from palimpsest.extraction.client import Endpoint, ModelClient, ModelFailed
from palimpsest.schema.pairs import (
    Judged,
    PairFact,
    PairVerdict,
    PendingPair,
    Ruling,
    TokenCap,
)

log = logging.getLogger(__name__)
# The prompt in force: ``prompts/<VERSION>.md`` (a changed prompt is a new file and version,
# stamped on the verdicts it gives).
VERSION = "judge_v1"
MAX_REASON = 500  # characters of a reason kept
MAX_STAMP = 200
TOOL = wire.Tool("record_verdicts", "Record a verdict for each pair of facts.")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "verdicts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "pair": {"type": "string"},
                    "verdict": {"type": "string", "enum": [v.value for v in PairVerdict]},
                    "reason": {"type": "string"},
                },
                "required": ["pair", "verdict", "reason"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["verdicts"],
    "additionalProperties": False,
}


@cache
def instructions(version: str = VERSION) -> str:
    return (files("palimpsest.extraction") / "prompts" / f"{version}.md").read_text("utf-8")


class ModelJudge:
    name = "model"

    def __init__(
        self,
        client: ModelClient,
        *,
        version: str = VERSION,
        pairs_per_call: int = 20,
        tokens_per_day: int = 0,
    ) -> None:
        self.client = client
        self.version = version
        self.pairs_per_call = pairs_per_call
        self.tokens_per_day = tokens_per_day  # one tenant's cap, shared with extraction
        self.stamp = f"model:{version}:{client.endpoint.model}"[:MAX_STAMP]

    @classmethod
    def from_settings(cls, settings: Settings) -> ModelJudge:
        endpoint = Endpoint(
            protocol=wire.Protocol(settings.model.protocol),
            url=settings.model.url or "",
            model=settings.model.name or "",
            api_key=settings.model.api_key,
            timeout_seconds=settings.model.timeout_seconds,
            max_attempts=settings.model.max_attempts,
            max_answer_bytes=settings.model.max_answer_bytes,
            max_output_tokens=settings.model.max_output_tokens,
        )
        return cls(
            ModelClient(endpoint),
            pairs_per_call=settings.model.judge_pairs_per_call,
            tokens_per_day=settings.model.max_tokens_per_day,
        )

    def __repr__(self) -> str:
        return f"ModelJudge({self.client.endpoint!r}, {self.version})"

    async def judge(self, pairs: Sequence[PendingPair], cap: TokenCap | None) -> Judged:
        rulings: dict[str, Ruling] = {}
        failed: list[str] = []
        counts: Counter[str] = Counter()
        for at in range(0, len(pairs), self.pairs_per_call):
            batch = list(pairs[at : at + self.pairs_per_call])
            if cap is not None and self.tokens_per_day:
                used = await cap.tokens_today()
                if used >= self.tokens_per_day:
                    log.warning(
                        "model judging refused for %d pair(s): %d tokens spent today, the "
                        "tenant's cap is %d (PALIMPSEST_MAX_EXTRACTION_TOKENS_PER_DAY)",
                        len(pairs) - at,
                        used,
                        self.tokens_per_day,
                    )
                    metrics.JUDGE_CALLS.labels("refused").inc()
                    counts["judge_refused"] += len(pairs) - at
                    break
            counts["judge_calls"] += 1
            try:
                answer = await self.client.call(
                    instructions(self.version), document(batch), SCHEMA, TOOL
                )
            except ModelFailed as e:
                # The reason names a status, a class or a cap: never the key or the text.
                log.warning("model judging failed for %d pair(s): %s", len(batch), e)
                metrics.JUDGE_CALLS.labels("failed").inc()
                counts["judge_failed"] += len(batch)
                failed += [p.id for p in batch]
                continue
            metrics.JUDGE_CALLS.labels("answered").inc()
            metrics.TOKENS.labels("in").inc(answer.tokens_in)
            metrics.TOKENS.labels("out").inc(answer.tokens_out)
            counts.update(tokens_in=answer.tokens_in, tokens_out=answer.tokens_out)
            spent = answer.tokens_in + answer.tokens_out
            if cap is not None and self.tokens_per_day and spent:
                await cap.spend_tokens(spent)
            found, dropped = check(answer.payload, {p.id for p in batch})
            rulings.update(found)
            counts["judged"] += len(found)
            for reason, n in dropped.items():
                metrics.JUDGE_DROPPED.labels(reason).inc(n)
                counts["judge_dropped"] += n
        return Judged(rulings, self.stamp, failed, dict(counts))


def document(pairs: Sequence[PendingPair]) -> str:
    """The user message: the pairs, each with its two facts."""
    return json.dumps(
        {
            "pairs": [
                {"id": p.id, "older": _shown(p.older), "newer": _shown(p.newer)} for p in pairs
            ]
        },
        ensure_ascii=False,
    )


def _shown(f: PairFact) -> dict[str, Any]:
    return {
        "text": f.text,
        "subject": f.subject,
        "predicate": f.predicate,
        "object": f.object,
        "validAt": _iso(f.valid_at),
        "invalidAt": _iso(f.invalid_at),
        "observedAt": _iso(f.observed_at),
    }


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def check(payload: dict[str, Any], asked: set[str]) -> tuple[dict[str, Ruling], Counter[str]]:
    """The verdicts that pass, by pair id; the rest counted by reason (``malformed``,
    ``unknown_pair``, ``unknown_verdict``, ``repeated``)."""
    dropped: Counter[str] = Counter()
    items = payload.get("verdicts")
    if not isinstance(items, list):
        dropped["malformed"] += 1
        return {}, dropped
    found: dict[str, Ruling] = {}
    for item in items:
        if not isinstance(item, dict):
            dropped["malformed"] += 1
            continue
        pair, verdict, reason = item.get("pair"), item.get("verdict"), item.get("reason")
        if not isinstance(pair, str) or not isinstance(reason, str):
            dropped["malformed"] += 1
        elif pair not in asked:
            dropped["unknown_pair"] += 1
        elif verdict not in {v.value for v in PairVerdict}:
            dropped["unknown_verdict"] += 1
        elif pair in found:
            dropped["repeated"] += 1
        else:
            found[pair] = Ruling(PairVerdict(verdict), " ".join(reason.split())[:MAX_REASON])
    return found, dropped
