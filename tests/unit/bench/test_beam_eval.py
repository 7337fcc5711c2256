"""``eval beam --mode bm25`` end to end on a small synthetic folder (no database, no model):
the JSON keys the issue names, bad records counted, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from typer.testing import CliRunner

from palimpsest.cli import cli_app
from palimpsest.errors import InvalidArgument


def _folder(tmp: Path) -> Path:
    messages = [
        {
            "conversation": "c1",
            "batch": 1,
            "id": 0,
            "role": "user",
            "time_anchor": "2024-03-01",
            "text": "My build server runs on port 8080.",
        },
        {
            "conversation": "c1",
            "batch": 1,
            "id": 1,
            "role": "assistant",
            "time_anchor": "2024-03-01",
            "text": "Noted: a build server on 8080.",
        },
        {
            "conversation": "c1",
            "batch": 2,
            "id": 2,
            "role": "user",
            "time_anchor": "2024-03-09",
            "text": "I moved the build server to port 9090 yesterday.",
        },
        {
            "conversation": "c1",
            "batch": 2,
            "id": 3,
            "role": "user",
            "time_anchor": "2024-03-09",
            "text": "",
        },
        {"conversation": "c1", "batch": 2, "role": "user", "time_anchor": None, "text": "no id"},
    ]
    questions = [
        {
            "conversation": "c1",
            "type": "knowledge_update",
            "index": 0,
            "question": "Which port does my build server use?",
            "evidence": [0, 2],
            "evidence_parts": {"original_info": [0], "updated_info": [2]},
            "answer": "9090",
        },
        {
            "conversation": "c1",
            "type": "abstention",
            "index": 0,
            "question": "What is my cat called?",
            "evidence": [],
            "evidence_parts": None,
        },
        {
            "conversation": "c1",
            "type": "information_extraction",
            "index": 1,
            "question": "port?",
            "evidence": [41],
            "evidence_parts": None,
        },
    ]
    (tmp / "messages.jsonl").write_bytes(b"\n".join(orjson.dumps(m) for m in messages))
    lines = [orjson.dumps(q) for q in questions] + [b"{'conversation': 'c1', 'type':"]
    (tmp / "questions.jsonl").write_bytes(b"\n".join(lines))
    return tmp


def test_bm25_run_prints_the_issue_s_keys(tmp_path: Path) -> None:
    data = _folder(tmp_path)
    result = CliRunner().invoke(cli_app(), ["eval", "beam", "--data", str(data), "--mode", "bm25"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["metrics"] == {"recall_any@10": 1.0, "recall_all@10": 1.0, "ndcg@10": 1.0}
    assert out["by_type"] == {
        "knowledge_update": {"n": 1, "recall_any@10": 1.0, "recall_all@10": 1.0, "ndcg@10": 1.0}
    }
    # "port" ranks the shorter original above the update: BM25 has no notion of newer.
    assert out["knowledge_update_newer_first"] == 0.0
    assert out["questions"] == {
        "total": 2,
        "scored": 1,
        "unscored": 1,
        "unscored_by_type": {"abstention": 1},
    }
    assert out["skipped"] == {
        "messages.jsonl: id: missing": 1,
        "messages.jsonl: text: blank": 1,
        "questions.jsonl: evidence id names no message": 1,
        "questions.jsonl: evidence: names no message": 1,
        "questions.jsonl: neither JSON nor a Python literal": 1,
    }


def test_details_list_the_evidence_ranks(tmp_path: Path) -> None:
    data = _folder(tmp_path)
    args = ["eval", "beam", "--data", str(data), "--mode", "bm25", "--details"]
    result = CliRunner().invoke(cli_app(), args)
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["details"]
    assert row["parts"] == {"original_info": {"c1:0": 1}, "updated_info": {"c1:2": 2}}


def test_bm25_refuses_ablation(tmp_path: Path) -> None:
    data = _folder(tmp_path)
    result = CliRunner().invoke(
        cli_app(), ["eval", "beam", "--data", str(data), "--mode", "bm25", "--folds"]
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, InvalidArgument)
    assert "bm25" in str(result.exception)
