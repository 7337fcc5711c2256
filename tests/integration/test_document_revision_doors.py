"""Document revisions through every door on the real Neo4j: an export and import round trip
keeps every revision byte for byte and the history; the MCP tools and the CLI read history,
revisions and diffs, and restore, with GraphQL's answers and errors."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from palimpsest.config import Settings
from palimpsest.jobs.portability import import_from_file
from tests.integration.answers import code_of, ok
from tests.integration.conftest import Gql
from tests.integration.test_document_revisions import (
    AT,
    DELETE,
    DIFF,
    EDITED,
    HISTORY,
    IMPORT,
    RESTORE,
    UPDATE,
    V1,
    V2,
    V3,
    assert_exact,
)
from tests.integration.test_ingest import _cli
from tests.integration.test_mcp import call, http_client

ERASE_ME = "mutation { eraseMe { status } }"
EXPORT = "{ exportMe { lines } }"
EXPECTED = {1: V1, 2: V2, 3: V3, 5: V2}


@pytest.fixture
def who(token: Callable[..., str], tenant_id: str) -> str:
    return token(tenant_id, "alice", "writer")


def five_revisions(gql: Gql, who: str) -> str:
    """Import, edit a chunk, re-import, delete, restore revision 2: the document's id."""
    path = f"/doors/{uuid.uuid4().hex[:8]}"
    first = ok(gql(IMPORT, who, m=V1, path=path))["importDocument"]
    doc_id: str = first["summary"]["id"]
    intro = next(c for c in first["chunks"] if c["text"] == "Intro paragraph.\n")
    ok(gql(UPDATE, who, id=intro["id"], t=EDITED, r=1))
    ok(gql(IMPORT, who, m=V3, path=path))
    ok(gql(DELETE, who, id=doc_id))
    ok(gql(RESTORE, who, id=doc_id, r=2))
    return doc_id


def everything(gql: Gql, who: str, doc_id: str) -> dict[str, Any]:
    """Every revision whole, the history and every diff, through GraphQL."""
    revisions = {r: ok(gql(AT, who, id=doc_id, r=r))["document"] for r in EXPECTED}
    for r, text in EXPECTED.items():
        assert_exact(revisions[r], text)
    history = ok(gql(HISTORY, who, id=doc_id))["documentHistory"]["items"]
    diffs = {
        (a, b): ok(gql(DIFF, who, id=doc_id, a=a, b=b))["documentDiff"]
        for a in EXPECTED
        for b in EXPECTED
        if a <= b
    }
    return {"revisions": revisions, "history": history, "diffs": diffs}


def write(tmp_path: Path, lines: list[str]) -> Path:
    out = tmp_path / f"{uuid.uuid4().hex[:6]}.jsonl"
    out.write_text("\n".join(lines) + "\n")
    return out


def test_export_and_import_keep_every_revision_and_the_history(
    gql: Gql, who: str, settings: Settings, tmp_path: Path
) -> None:
    doc_id = five_revisions(gql, who)
    before = everything(gql, who, doc_id)
    assert [i["revision"] for i in before["history"]] == [5, 4, 3, 2, 1]
    lines = ok(gql(EXPORT, who))["exportMe"]["lines"]
    kinds = [orjson.loads(line)["kind"] for line in lines]
    assert orjson.loads(lines[0])["minor"] >= 2  # revision records came in minor 2
    assert kinds.count("document_revision") == 5
    assert kinds.count("chunk_version") > 0

    assert ok(gql(ERASE_ME, who))["eraseMe"]["status"] == "DONE"
    assert code_of(gql(HISTORY, who, id=doc_id)) == "NOT_FOUND"
    loaded = asyncio.run(import_from_file(settings, write(tmp_path, lines)))
    assert loaded["records"]["document_revision"] == 5
    assert loaded["records"]["chunk_version"] == kinds.count("chunk_version")

    assert everything(gql, who, doc_id) == before
    assert ok(gql(EXPORT, who))["exportMe"]["lines"][1:] == lines[1:]
    for item in before["history"]:  # knownAt reads each revision's own time again
        if not item["deleted"]:
            doc = ok(gql(AT, who, id=doc_id, k=item["createdAt"]))["document"]
            assert doc["markdown"] == EXPECTED[item["revision"]]
    # The history goes on where the import left it: restoring revision 3 needs the imported
    # versions' vectors and text.
    restored = ok(gql(RESTORE, who, id=doc_id, r=3))["restoreDocument"]
    assert (restored["markdown"], restored["summary"]["revision"]) == (V3, 6)


def test_an_export_without_revision_records_still_imports(
    gql: Gql, who: str, settings: Settings, tmp_path: Path
) -> None:
    doc_id = five_revisions(gql, who)
    lines = ok(gql(EXPORT, who))["exportMe"]["lines"]
    header = {**orjson.loads(lines[0]), "minor": 1}
    older = [
        line
        for line in lines[1:-1]
        if orjson.loads(line)["kind"] not in ("chunk_version", "document_revision")
    ]
    end = {"kind": "end", "records": len(older)}
    ok(gql(ERASE_ME, who))
    asyncio.run(
        import_from_file(
            settings,
            write(tmp_path, [orjson.dumps(header).decode(), *older, orjson.dumps(end).decode()]),
        )
    )
    present = ok(gql(AT, who, id=doc_id))["document"]
    assert present["markdown"] == V2
    assert present["summary"]["revision"] == 5


async def test_mcp_tools_read_diff_and_restore_revisions(
    live_server_url: str, gql: Gql, who: str, token: Callable[..., str]
) -> None:
    doc_id = five_revisions(gql, who)
    async with http_client(live_server_url, who) as client:
        found = await call(client, "document_history", id=doc_id, limit=2)
        assert [r["revision"] for r in found["revisions"]] == [5, 4]
        assert found["revisions"][1]["deleted"] is True
        rest = await call(client, "document_history", id=doc_id, after=found["cursor"])
        assert [r["revision"] for r in rest["revisions"]] == [3, 2, 1]
        assert rest["cursor"] is None
        for revision, text in EXPECTED.items():
            doc = (await call(client, "document_revision", id=doc_id, revision=revision))[
                "document"
            ]
            assert (doc["markdown"], doc["revision"]) == (text, revision)
            via_graphql = ok(gql(AT, who, id=doc_id, r=revision))["document"]
            assert [c["id"] for c in doc["chunks"]] == [c["id"] for c in via_graphql["chunks"]]
        first = rest["revisions"][-1]["created_at"]
        then = await call(client, "document_revision", id=doc_id, known_at=first)
        assert then["document"]["markdown"] == V1
        early = await call(client, "document_revision", id=doc_id, known_at="2001-01-01")
        assert early == {"document": None}
        diff = await call(client, "document_diff", id=doc_id, from_revision=1, to_revision=3)
        assert diff["diff"] == ok(gql(DIFF, who, id=doc_id, a=1, b=3))["documentDiff"]
        restored = await call(client, "restore_document", id=doc_id, revision=1)
        assert (restored["document"]["markdown"], restored["document"]["revision"]) == (V1, 6)
    assert ok(gql(AT, who, id=doc_id))["document"]["markdown"] == V1


def test_cli_prints_history_a_revision_and_a_diff(gql: Gql, who: str) -> None:
    doc_id = five_revisions(gql, who)
    printed = _cli("document", "history", doc_id, "--scope", "USER", run_token=who)
    assert printed.returncode == 0, printed.stderr
    revisions = json.loads(printed.stdout)
    via_graphql = ok(gql(HISTORY, who, id=doc_id))["documentHistory"]["items"]
    assert [(r["revision"], r["deleted"], r.get("changed_chunks")) for r in revisions] == [
        (i["revision"], i["deleted"], i["changedChunks"]) for i in via_graphql
    ]
    shown = _cli("document", "show", doc_id, "--revision", "1", run_token=who)
    assert (shown.returncode, shown.stdout) == (0, V1), shown.stderr
    diff = _cli("document", "diff", doc_id, "1", "2", run_token=who)
    assert diff.stdout == ok(gql(DIFF, who, id=doc_id, a=1, b=2))["documentDiff"]
    other = _cli("document", "history", "f" * 32, run_token=who)
    assert other.returncode == 1
    assert "not found" in other.stderr
