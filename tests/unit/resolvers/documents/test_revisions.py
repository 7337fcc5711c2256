"""Diffing two revisions (``resolvers.document_revisions.diff``): a revision over the line
cap is refused before any diff runs, naming the limit; a large diff runs in the offload pool,
never on the event loop."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.domain.documents import revisions
from palimpsest.errors import QuotaExceeded
from palimpsest.identity import Scope
from palimpsest.resolvers.documents import revisions as document_revisions
from palimpsest.resolvers.services import Services
from tests.unit.offloads import RecordingOffload
from tests.unit.principals import principal
from tests.unit.recording import services


def nothing(statement: Statement, params: dict[str, Any]) -> list[Row]:
    return []


def with_texts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, texts: dict[int, str], **settings: Any
) -> tuple[Services, RecordingOffload]:
    async def markdown_of(svc: Services, who: Any, scope: Any, doc: str, revision: int) -> str:
        return texts[revision]

    monkeypatch.setattr(document_revisions, "_markdown_or_empty", markdown_of)
    svc, _ = services(nothing, tmp_path, **settings)
    offload = RecordingOffload()
    return dataclasses.replace(svc, offload=offload), offload


async def test_a_large_diff_runs_in_the_pool(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    old = "".join(f"line {i}\n" for i in range(10_000))
    new = old.replace("line 5000\n", "line five thousand\n")
    svc, offload = with_texts(monkeypatch, tmp_path, {1: old, 2: new})
    got = await document_revisions.diff(svc, principal(), Scope.USER, "d" * 32, 1, 2)
    assert got == revisions.unified_diff(old, new, "revision 1", "revision 2")
    assert offload.pooled == ["palimpsest.domain.documents.revisions.unified_diff"]


async def test_a_revision_over_the_line_cap_is_refused_naming_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    long = "x\n" * 101
    texts = {1: "short\n", 2: long, 3: long[:-1]}
    svc, offload = with_texts(monkeypatch, tmp_path, texts, diff_max_lines=100)
    for a, b in ((1, 2), (2, 3), (1, 3)):
        with pytest.raises(QuotaExceeded) as caught:
            await document_revisions.diff(svc, principal(), Scope.USER, "d" * 32, a, b)
        assert caught.value.details == {"limit": "diffMaxLines", "allowed": 100, "lines": 101}
        assert "diffMaxLines" in caught.value.message
    assert offload.pooled == []
    # At the cap, it answers.
    texts[2] = "x\n" * 100
    assert await document_revisions.diff(svc, principal(), Scope.USER, "d" * 32, 1, 2)
