"""The revision doors (``graphql.document_revisions``) through the schema on the recording
executor: the history's wire shape and pages, a diff, and the refusals' codes."""

from __future__ import annotations

from pathlib import Path

from tests.unit.graphql.doors import answer
from tests.unit.principals import principal
from tests.unit.recording import services
from tests.unit.resolvers.documents.test_revisions import DOC, T2, T3, History

HISTORY = """query($id: ID!, $after: String) {
  documentHistory(scope: USER, id: $id, limit: 2, after: $after) {
    items { revision createdAt deleted changedChunks } cursor hasMore
  }
}"""


async def test_the_history_reaches_the_wire_newest_first(tmp_path: Path) -> None:
    svc, _ = services(History(), tmp_path)
    data, errors = await answer(svc, principal(), HISTORY, id=DOC, after=None)
    assert errors == []
    assert data is not None
    page = data["documentHistory"]
    assert page["items"] == [
        {"revision": 3, "createdAt": T3.isoformat(), "deleted": True, "changedChunks": 1},
        {"revision": 2, "createdAt": T2.isoformat(), "deleted": False, "changedChunks": 1},
    ]
    assert page["hasMore"] is True
    data, _ = await answer(svc, principal(), HISTORY, id=DOC, after=page["cursor"])
    assert data is not None
    assert [i["revision"] for i in data["documentHistory"]["items"]] == [1]


async def test_a_diff_and_its_refusals(tmp_path: Path) -> None:
    svc, _ = services(History(live=True), tmp_path)
    query = """query($id: ID!, $from: Int!, $to: Int!) {
      documentDiff(scope: USER, id: $id, fromRevision: $from, toRevision: $to)
    }"""
    data, errors = await answer(svc, principal(), query, id=DOC, **{"from": 1, "to": 2})
    assert errors == []
    assert data is not None
    assert "+Second." in data["documentDiff"]
    _, errors = await answer(svc, principal(), query, id=DOC, **{"from": 2, "to": 1})
    assert [e["code"] for e in errors] == ["INVALID_ARGUMENT"]
    _, errors = await answer(svc, principal(), query, id=DOC, **{"from": 1, "to": 9})
    assert [(e["code"], e["message"]) for e in errors] == [
        ("NOT_FOUND", "the document has no revision 9")
    ]


async def test_restoring_a_deletion_is_not_found(tmp_path: Path) -> None:
    svc, recorder = services(History(), tmp_path)
    mutation = (
        "mutation($id: ID!) { restoreDocument(scope: USER, id: $id, revision: 3) { markdown } }"
    )
    _, errors = await answer(svc, principal(), mutation, id=DOC)
    assert [(e["code"], e["message"]) for e in errors] == [
        ("NOT_FOUND", "revision 3 is the document's deletion")
    ]
    assert "BUMP_DOCUMENT" not in recorder.names()
