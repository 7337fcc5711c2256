"""The default model's folder is laid out safely by processes that start together."""

from __future__ import annotations

import json
import time
from pathlib import Path

from palimpsest.embedding import build_default_model_dir


def test_a_second_start_rewrites_nothing_and_a_damaged_file_is_replaced(tmp_path: Path) -> None:
    folder = build_default_model_dir(tmp_path / "model")
    files = sorted(p for p in folder.iterdir() if p.is_file())
    assert {p.name for p in files} >= {"model.onnx", "tokenizer.json", "config.json"}
    stamps = {p.name: p.stat().st_mtime_ns for p in files}
    time.sleep(0.01)

    build_default_model_dir(folder)  # another worker starting: nothing may be truncated

    assert {p.name: p.stat().st_mtime_ns for p in files} == stamps
    (folder / "config.json").write_text("{")  # a file left half-written
    build_default_model_dir(folder)
    assert json.loads((folder / "config.json").read_text())["model_type"] == "bert"
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
