"""`palimpsest ingest`'s engine: batches, unchanged files skipped, resumption, replacement.

The import runs in-process through importDocuments' resolver, as the CLI does; what it left
in the scope is then read back through the real HTTP API.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from neo4j import Driver

from palimpsest.config import Settings
from palimpsest.identity import Scope, resolve_scope
from palimpsest.identity.tokens import load_keys, verify
from palimpsest.jobs.ingest import Manifest, Report, find_sources, ingest
from palimpsest.runtime import open_services
from tests.integration.conftest import Gql

DOCS = """query($p: String!) {
  documents(scope: USER, pathPrefix: $p, limit: 500) { items { id path } hasMore }
}"""
EXPORT = "query($id: ID!) { document(scope: USER, id: $id) { markdown } }"
DELETE = "mutation($id: ID!) { deleteDocument(scope: USER, id: $id) { chunksDeleted } }"


class Interrupted(Exception):
    """Stands for Ctrl-C after the first batch."""


async def test_ingest_skips_unchanged_resumes_and_replaces(
    tmp_path: Path, settings: Settings, token: Callable[..., str], tenant: str, gql: Gql
) -> None:
    notes = tmp_path / "notes"
    (notes / "deep").mkdir(parents=True)
    for i in range(24):
        (notes / f"n{i:02}.md").write_text(f"# Note {i}\n\nItem {i} costs {i * 7} coins.\n")
    (notes / "deep" / "last.markdown").write_text("# Last\n\nThe last one.\n")
    (notes / "ignored.txt").write_text("not Markdown")
    (notes / "bad.md").write_bytes(b"# Bad\n\n\xff\xfe not UTF-8\n")
    raw = token(tenant, "ingest-user")
    who = verify(load_keys(settings), raw)
    sources = find_sources([notes])
    assert len(sources) == 26
    assert "/deep/last.markdown" in {s.path for s in sources}
    manifest = Manifest(tmp_path / "ingest.db")

    def interrupt_after_first_batch(done: int, _chunks: int) -> None:
        if done >= 10:
            raise Interrupted

    async with open_services(settings) as svc:

        async def run(progress: Callable[[int, int], None] = lambda *_: None) -> Report:
            return await ingest(svc, who, Scope.USER, sources, manifest, 10, progress)

        with pytest.raises(Interrupted):
            await run(interrupt_after_first_batch)
        first = gql(DOCS, raw, p="/")["data"]["documents"]["items"]
        assert len(first) == 10  # one whole batch, nothing half-imported

        resumed = await run()
        assert (resumed.imported, resumed.unchanged, resumed.replaced) == (15, 10, 0)
        assert [path for path, _ in resumed.failed] == ["/bad.md"]

        docs = gql(DOCS, raw, p="/")["data"]["documents"]["items"]
        paths = sorted(d["path"] for d in docs)
        assert paths == sorted(s.path for s in sources if s.path != "/bad.md")  # each once

        (notes / "n03.md").write_text("# Note 3\n\nItem 3 now costs 99 coins.\n")
        changed = await run()
        assert (changed.imported, changed.unchanged, changed.replaced) == (0, 24, 1)
        docs = gql(DOCS, raw, p="/n03.md")["data"]["documents"]["items"]
        assert len(docs) == 1  # the old version was replaced, not kept beside
        exported = gql(EXPORT, raw, id=docs[0]["id"])["data"]["document"]["markdown"]
        assert exported == "# Note 3\n\nItem 3 now costs 99 coins.\n"

        # A document deleted meanwhile is imported again, not skipped by the manifest.
        gone = gql(DOCS, raw, p="/n05.md")["data"]["documents"]["items"][0]["id"]
        assert gql(DELETE, raw, id=gone)["data"]["deleteDocument"]["chunksDeleted"] > 0
        again = await run()
        assert (again.imported, again.unchanged) == (1, 24)
    manifest.close()
    # Another user of the tenant sees none of it.
    other = token(tenant, "someone-else")
    assert gql(DOCS, other, p="/")["data"]["documents"]["items"] == []


def _cli(
    *args: str, run_token: str | None, url: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The command; ``url``: the running API its quick looks talk to."""
    env = {k: v for k, v in os.environ.items() if k != "PALIMPSEST_RUN_TOKEN"}
    if run_token is not None:
        env["PALIMPSEST_RUN_TOKEN"] = run_token
    if url is not None:
        env["PALIMPSEST_SERVER_URL"] = url
    return subprocess.run(
        [str(Path(sys.executable).parent / "palimpsest"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def test_memory_commands_act_as_the_run_token(
    tmp_path: Path,
    token: Callable[..., str],
    tenant: str,
    gql: Gql,
    settings: Settings,
    neo4j_driver: Driver,
    live_server_url: str,
) -> None:
    raw = token(tenant, "shell-user")
    saved = _cli(
        "memory", "set", "shell/greeting", '{"hello": "world"}', run_token=raw, url=live_server_url
    )
    assert saved.returncode == 0, saved.stderr
    got = _cli("memory", "get", "shell/greeting", run_token=raw, url=live_server_url)
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout) == {"hello": "world"}
    body = gql('{ memory(scope: USER, key: "shell/greeting") { value } }', raw)
    assert body["data"]["memory"]["value"] == {"hello": "world"}
    missing = _cli("memory", "get", "shell/nothing", run_token=raw, url=live_server_url)
    assert missing.returncode == 1
    assert "no entry 'shell/nothing'" in missing.stderr
    (tmp_path / "a.md").write_text("# Greeting\n\nThe shell says hello to the world.\n")
    ingested = _cli("ingest", str(tmp_path / "a.md"), run_token=raw)
    assert ingested.returncode == 0, ingested.stderr
    assert json.loads(ingested.stdout)["imported"] == 1
    found = _cli("memory", "search", "what does the shell say?", run_token=raw, url=live_server_url)
    assert found.returncode == 0, found.stderr
    kinds = {hit["kind"] for hit in json.loads(found.stdout)}
    assert kinds == {"notes", "documents"}
    # Statistics as written before term peaks were kept get them from the scope's rows.
    assert json.loads(_cli("term-peaks", run_token=raw).stdout) == {}
    key = resolve_scope(verify(load_keys(settings), raw), Scope.USER).scope_key
    neo4j_driver.execute_query(
        "MATCH (s:TermStats {scope_key: $key}) REMOVE s.bounded, s.max_tf, s.max_ratio", key=key
    )
    peaks = _cli("term-peaks", run_token=raw)
    assert peaks.returncode == 0, peaks.stderr
    assert set(json.loads(peaks.stdout)) == {"memory", "chunk"}
    [left] = neo4j_driver.execute_query(
        "MATCH (s:TermStats {scope_key: $key}) WHERE s.term <> '' AND s.kind <> 'speaker' "
        "RETURN count(s) AS n, count(s.bounded) AS bounded",
        key=key,
    ).records
    assert left["n"] > 0
    assert left["bounded"] == left["n"]
    nobody = _cli("memory", "get", "shell/greeting", run_token=None, url=live_server_url)
    assert nobody.returncode != 0
    assert "PALIMPSEST_RUN_TOKEN" in nobody.stderr
