"""The bench's evaluation figures are scope-local (issue 12): the LoCoMo harness
(``palimpsest_bench.recall_eval``), on a made-up conversation, gives the same figures before
and after another tenant loads turns with the same words. The product's own side of this,
byte-identical answers across tenants, is ``test_recall_isolation.py``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from palimpsest.config import Settings
from palimpsest.resolvers.recall.request import Mode
from palimpsest_bench import recall_eval
from tests.integration.conftest import Gql

pytestmark = pytest.mark.integration

IMPORT = """mutation($m: String!) { importDocument(scope: USER, markdown: $m) {
  summary { id } } }"""


def ok(body: dict[str, Any]) -> dict[str, Any]:
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def locomo_like(folder: Path) -> None:
    """A tiny conversation dataset in the LoCoMo layout (made up here, not evaluation data)."""
    topics = ["hiking trip", "pottery class", "job interview", "sister's wedding", "new puppy"]
    turns: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    for session in range(1, 4):
        for t, topic in enumerate(topics):
            speaker = "Mira" if t % 2 == 0 else "Tomas"
            dia = f"D{session}:{t + 1}"
            text = f"I keep thinking about the {topic} from session {session}."
            turns.append(
                {
                    "sample_id": "conv-1",
                    "session": session,
                    "session_date_time": f"1:00 pm on {session} May, 2023",
                    "observed_at": f"2023-05-0{session}T13:00:00",
                    "turn_index": t,
                    "dia_id": dia,
                    "speaker": speaker,
                    "text": text,
                }
            )
            questions.append(
                {
                    "sample_id": "conv-1",
                    "qa_index": len(questions),
                    "question": f"What did {speaker} say about the {topic} in session {session}?",
                    "answer": topic,
                    "category": 1 + len(questions) % 4,
                    "evidence": [dia],
                }
            )
    folder.mkdir(parents=True, exist_ok=True)
    for name, rows in (("turns.jsonl", turns), ("qa.jsonl", questions)):
        (folder / name).write_bytes(b"\n".join(orjson.dumps(r) for r in rows) + b"\n")


async def test_eval_figures_are_equal_with_other_tenants_loaded(
    settings: Settings, tmp_path: Path, gql: Gql, token: Callable[..., str]
) -> None:
    # The LoCoMo harness, on a made-up conversation, before and after other tenants load
    # turns with the same words: the figures must not move.
    data = tmp_path / "locomo"
    locomo_like(data)
    quiet = settings.replace(log_level="WARNING")
    say: Callable[[str], None] = lambda _: None  # noqa: E731
    first = await recall_eval.run(quiet, "locomo", data, Mode.HYBRID, say)
    other = token(f"iso-o-{uuid.uuid4().hex[:8]}", "conv-1", "planner")
    lines = [f"Mira and Tomas talked about the hiking trip {i} in session {i}." for i in range(80)]
    ok(gql(IMPORT, other, m="\n\n".join(lines) + "\n"))
    second = await recall_eval.run(quiet, "locomo", data, Mode.HYBRID, say)
    assert first["metrics"] == second["metrics"]
    assert first["by_category"] == second["by_category"]
    assert first["metrics"]["recall@10"] > 0.5  # the harness ranks the evidence, not noise
