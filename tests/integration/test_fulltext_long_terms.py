"""A pasted blob (one run of letters over ``MAX_TERM_CHARS``) in a document on the real Neo4j:
as a term its :TermStats key overflowed the range index and the whole import failed (BEAM's
dev split holds a 10,796-character bcrypt-and-base64 run). Now the import succeeds, the chunk
keeps its text whole, and the words around the blob are found."""

from __future__ import annotations

import uuid

import pytest

from palimpsest.domain.ranking import fulltext as ft
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Scope
from palimpsest.resolvers import documents as importer
from palimpsest.resolvers import facts
from palimpsest.resolvers.recall import planner as rr
from palimpsest.resolvers.services import Services
from tests.unit.principals import principal

pytestmark = pytest.mark.integration


async def test_a_document_with_a_blob_longer_than_any_term_is_stored_and_found(
    svc: Services,
) -> None:
    who = principal(tenant_id=f"blob-{uuid.uuid4().hex[:8]}")
    blob = "ZmJiY2Rl" * 1_400  # 11,200 characters, one token
    assert len(blob) > ft.MAX_TERM_CHARS
    text = f"The saffron heron token is {blob} for staging.\n\nAn unrelated lantern paragraph.\n"
    doc = await importer.import_document(svc, who, Scope.USER, text, "blob", None, None)
    assert doc.chunks[0].text.strip() == text.split("\n\n")[0]
    req = rr.RecallRequest(
        query="saffron heron staging",
        top_k=5,
        sources=frozenset({pure.Source.DOCUMENTS}),
        view=facts.time_view(svc, None, None),
        levers=pure.Levers.of(svc.settings),
        mode=rr.Mode.FULLTEXT,
    )
    hits = (await rr.recall(svc, who, [Scope.USER], req)).hits
    assert [h.id for h in hits][:1] == [doc.chunks[0].id]
