"""Importing documents (``resolvers.documents.importing``) on a recording executor: what a
new document's write holds and the answer built from it, a document at the path that went
away meanwhile, and the refusals that write nothing. Importing a large document: parsing
it, indexing its terms and rebuilding its chunks' terms (a re-import) run in the offload
pool, never on the event loop; what they give is what the inline functions give."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.errors import Conflict, InvalidArgument
from palimpsest.identity import Scope, resolve_scope
from palimpsest.resolvers import term_index
from palimpsest.resolvers.documents import importing as document_import
from palimpsest.resolvers.services import Services
from tests.unit.offloads import RecordingOffload
from tests.unit.principals import principal
from tests.unit.recording import services

LARGE = "".join(f"# Part {i}\n\nThe river stone {i} was quiet on Monday.\n\n" for i in range(2000))


def pooled_services(tmp_path: Path, answer: Any = None) -> tuple[Services, RecordingOffload]:
    svc, _ = services(answer or (lambda s, p: []), tmp_path)
    offload = RecordingOffload()
    return dataclasses.replace(svc, offload=offload), offload


async def test_parsing_and_indexing_a_large_document_run_in_the_pool(tmp_path: Path) -> None:
    svc, offload = pooled_services(tmp_path)
    draft = document_import.DocumentDraft(LARGE, "t")
    parsed = await document_import._parse(svc, 0, draft)
    fields, delta = await document_import._index(svc, parsed)
    assert offload.pooled == [
        "palimpsest.domain.documents.markdown.parse",
        "palimpsest.resolvers.term_index.document_fields",
    ]
    chunks = parsed.parsed.chunks
    texts = [c.text for c in chunks]
    contexts = term_index.heading_contexts("t", [(c.type.value, c.text, c.parent) for c in chunks])
    on = svc.settings.recall.fulltext_neighbours
    assert svc.settings.recall.fulltext_context
    assert fields == term_index.chunk_fields(texts, on, None, contexts)
    assert delta == term_index.added(fields)


async def test_a_small_document_stays_inline(tmp_path: Path) -> None:
    svc, offload = pooled_services(tmp_path)
    parsed = await document_import._parse(svc, 0, document_import.DocumentDraft("# a\n\nb\n"))
    await document_import._index(svc, parsed)
    assert offload.pooled == []


async def test_rebuilding_many_chunks_terms_runs_in_the_pool(tmp_path: Path) -> None:
    chunks = [f"c{i:05d}" for i in range(2000)]

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name != "READ_CHUNK_CONTEXT":
            return []
        return [
            {
                "id": cid,
                "text": f"The river stone {cid} was quiet on Monday, said Alice.",
                "prev": None,
                "next": None,
                "title": None,
                "headings": [],
                "ft": None,
                "ft_tf": None,
                "indexed": False,
                "speaker": None,
                "observed_at": None,
            }
            for cid in params["ids"]
        ]

    svc, offload = pooled_services(tmp_path, answer)
    ref = resolve_scope(principal(), Scope.USER)

    async def work(tx: Any) -> int:
        return await term_index.refresh_chunks(tx, svc.settings, chunks, svc.offload)

    assert await svc.db.scoped(ref).write_tx(work) == len(chunks)
    assert offload.pooled == ["palimpsest.resolvers.term_index.rebuilt"]


# -- what an import writes, and what it refuses -------------------------------------------


def importing(
    tmp_path: Path, at_path: dict[str, str] | None = None, holds: str | None = None
) -> tuple[Services, Any]:
    """Services whose scope holds a live document at each of ``at_path``'s paths (to id),
    holding the text ``holds``; each is gone by the time the import's write locks it."""
    held = at_path or {}

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "FIND_BY_PATH":
            return [{"id": held[params["path"]]}] if params["path"] in held else []
        if statement.name == "READ_CURRENT" and holds is not None:
            return [{"text": holds}]
        if statement.name == "RAISE_QUOTA_COUNTERS":
            return [{"fits": True}]
        return []

    return services(answer, tmp_path)


async def test_a_new_document_is_written_with_its_chunk_tree(tmp_path: Path) -> None:
    svc, recorder = importing(tmp_path)
    text = "# Trip\n\nWe left on Monday.\n"
    doc = await document_import.import_document(
        svc, principal(), Scope.USER, text, None, "/trips/porto.md", None
    )
    [create] = [c.params for c in recorder.calls if c.name == "CREATE_DOCUMENT"]
    assert (create["title"], create["path"], create["id"]) == (
        "Trip",
        "/trips/porto.md",
        doc.summary.id,
    )
    assert [c["text"] for c in create["chunks"]] == ["# Trip\n", "We left on Monday.\n"]
    assert create["parents"] == [-1, 0]
    assert all(c["embedding"] for c in create["chunks"])
    [stamp] = [c.params for c in recorder.calls if c.name == "STAMP_QUOTA_DOCUMENT_BYTES"]
    assert stamp["bytes"] == len(text.encode())
    # The answer is what was written: ids, tree and Markdown.
    assert [c.id for c in doc.chunks] == [c["id"] for c in create["chunks"]]
    assert doc.chunks[1].parent_id == doc.chunks[0].id
    assert doc.summary.chunk_count == 2


@pytest.mark.parametrize(
    ("drafts", "message"),
    [
        ([], "0 documents: give 1 to 100 per call"),
        ([document_import.DocumentDraft("x", path="relative.md")], "documents[0].path must start"),
        ([document_import.DocumentDraft("x", title="")], "documents[0].title must be 1-512"),
        (
            [
                document_import.DocumentDraft("a", path="/p"),
                document_import.DocumentDraft("b", path="/p"),
            ],
            "two documents of one call write over the same path",
        ),
    ],
)
async def test_a_bad_batch_is_refused_and_writes_nothing(
    tmp_path: Path, drafts: list[document_import.DocumentDraft], message: str
) -> None:
    svc, recorder = importing(tmp_path)
    with pytest.raises(InvalidArgument, match=re.escape(message)):
        await document_import.import_documents(svc, principal(), Scope.USER, drafts)
    assert not any(c.write for c in recorder.calls)


async def test_a_document_at_the_path_gone_meanwhile_needs_a_retry(tmp_path: Path) -> None:
    # Its text was there when the import began, so it was not embedded again: without the
    # document, the new one would lack the vector.
    svc, recorder = importing(tmp_path, {"/notes.md": "d" * 32}, holds="New text.\n")
    draft = document_import.DocumentDraft("New text.\n", path="/notes.md")
    with pytest.raises(Conflict, match="went away meanwhile; retry"):
        await document_import.import_documents(svc, principal(), Scope.USER, [draft])
    assert [c.params["id"] for c in recorder.calls if c.name == "READ_CURRENT"] == ["d" * 32]
    assert [c.params["id"] for c in recorder.calls if c.name == "LOCK_DOCUMENT"] == ["d" * 32]
    assert "CREATE_DOCUMENT" not in recorder.names()


async def test_a_new_text_at_a_path_gone_meanwhile_makes_a_new_document(tmp_path: Path) -> None:
    svc, recorder = importing(tmp_path, {"/notes.md": "d" * 32}, holds="Old text.\n")
    draft = document_import.DocumentDraft("New text.\n", path="/notes.md")
    [doc] = await document_import.import_documents(svc, principal(), Scope.USER, [draft])
    [create] = [c.params for c in recorder.calls if c.name == "CREATE_DOCUMENT"]
    assert create["id"] == doc.summary.id
    assert create["path"] == "/notes.md"


async def test_new_document_ignores_the_document_at_the_path(tmp_path: Path) -> None:
    svc, recorder = importing(tmp_path, {"/notes.md": "d" * 32})
    draft = document_import.DocumentDraft("New text.\n", path="/notes.md", new_document=True)
    [doc] = await document_import.import_documents(svc, principal(), Scope.USER, [draft])
    assert "LOCK_DOCUMENT" not in recorder.names()
    [create] = [c.params for c in recorder.calls if c.name == "CREATE_DOCUMENT"]
    assert create["id"] == doc.summary.id != "d" * 32
