"""The erasure doors (``graphql.erasure``) through the schema on the recording executor:
a receipt's wire shape (counts, who asked, the scope) and the refusals' codes."""

from __future__ import annotations

from pathlib import Path

from tests.unit.graphql.doors import answer
from tests.unit.principals import principal
from tests.unit.recording import NOW, services
from tests.unit.resolvers.erasure.test_erase import Graph

RECEIPT = (
    "{ id kind scope status requestedBy finishedAt attempts matched"
    " removed { chunks entries spans sqlBytes } authored { policy } }"
)


async def test_erase_me_answers_its_receipt(tmp_path: Path) -> None:
    svc, _ = services(Graph({"ERASE_CHUNKS": 3, "ERASE_MEMORY": 2}), tmp_path)
    data, errors = await answer(svc, principal(), "mutation { eraseMe " + RECEIPT + " }")
    assert errors == []
    assert data is not None
    receipt = data["eraseMe"]
    assert {k: receipt[k] for k in ("kind", "scope", "status", "requestedBy", "attempts")} == {
        "kind": "USER",
        "scope": "USER",
        "status": "DONE",
        "requestedBy": "self",
        "attempts": 1,
    }
    assert receipt["finishedAt"] == NOW.isoformat()
    assert receipt["matched"] is True
    assert receipt["removed"] == {"chunks": 3, "entries": 2, "spans": 0, "sqlBytes": 0}
    assert receipt["authored"] == {"policy": "DELETE"}


async def test_erase_subject_answers_a_subject_receipt(tmp_path: Path) -> None:
    graph = Graph()
    graph.subject_facts = 1
    svc, _ = services(graph, tmp_path)
    subject = '{type: "person", name: "Ada Lovelace"}'
    mutation = "mutation { eraseSubject(scope: USER, subject: " + subject + ") " + RECEIPT + " }"
    data, errors = await answer(svc, principal(), mutation)
    assert errors == []
    assert data is not None
    assert (data["eraseSubject"]["kind"], data["eraseSubject"]["authored"]) == ("SUBJECT", None)


async def test_an_unknown_subject_is_not_found(tmp_path: Path) -> None:
    svc, recorder = services(Graph(), tmp_path)
    mutation = """mutation {
      eraseSubject(scope: USER, subject: {type: "person", name: "Nobody"}) { id }
    }"""
    _, errors = await answer(svc, principal(), mutation)
    assert [e["code"] for e in errors] == ["NOT_FOUND"]
    assert not any(c.write for c in recorder.calls)
