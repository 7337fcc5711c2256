"""The model extractor's Prometheus counters (served on the metrics listener)."""

from __future__ import annotations

from prometheus_client import Counter

CALLS = Counter(
    "palimpsest_extraction_calls_total", "Model extraction calls, by outcome", ["outcome"]
)
TOKENS = Counter(
    "palimpsest_extraction_tokens_total", "Model extraction tokens, by direction", ["direction"]
)
FACTS = Counter("palimpsest_extraction_facts_total", "Candidate facts that passed every check")
DROPPED = Counter(
    "palimpsest_extraction_dropped_total", "Candidate facts dropped, by reason", ["reason"]
)
FAILED_SPANS = Counter(
    "palimpsest_extraction_failed_spans_total",
    "Spans written without model facts because the model gave no usable answer",
)
JUDGE_CALLS = Counter(
    "palimpsest_judge_calls_total", "Model calls judging fact pairs, by outcome", ["outcome"]
)
JUDGE_DROPPED = Counter(
    "palimpsest_judge_dropped_total",
    "Verdicts dropped from a judge's answer, by reason",
    ["reason"],
)
