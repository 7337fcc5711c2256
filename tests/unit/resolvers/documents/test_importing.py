"""Importing a large document: parsing it, indexing its terms and rebuilding its chunks' terms
(a re-import) run in the offload pool, never on the event loop; what they give is what the
inline functions give."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
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
    on = svc.settings.fulltext_neighbours
    assert svc.settings.fulltext_context
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
