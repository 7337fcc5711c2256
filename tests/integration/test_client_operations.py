"""The client over the real server, plane by plane: typed results with attribute access for
every named method, and ``call`` for the rest of the schema."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from palimpsest.client import (
    Client,
    EntityInput,
    FactInput,
    LegWeightsInput,
    MemoryFileCommandInput,
    MemoryFileEdit,
    Scope,
    Source,
    SpanInput,
    SqlStatementInput,
    operations,
)
from palimpsest.client.enums import ChunkType, ContextKind, Origin
from palimpsest.client.recall_results import ContextBlock
from palimpsest.errors import InvalidArgument, NotFound


@pytest.fixture
def client(live_server_url: str, token: Callable[..., str]) -> Iterator[Client]:
    who = token(f"t-{uuid.uuid4().hex[:10]}", "ada", "scribe", run="run-1")
    with Client(url=live_server_url, token=who) as c:
        yield c


def test_health_and_me(client: Client) -> None:
    assert client.health() == "ok"
    me = client.me()
    assert (me.user, me.agent, me.run) == ("ada", "scribe", "run-1")
    assert Scope.USER in me.memory_scopes


def test_documents_typed_and_read_back(client: Client) -> None:
    doc = client.import_document(Scope.USER, "# Ships\n\nThe Argo sailed at dawn.\n", path="/s")
    assert doc.summary.path == "/s"
    assert [c.type for c in doc.chunks][:2] == [ChunkType.HEADING, ChunkType.PARAGRAPH]
    again = client.document(Scope.USER, doc.summary.id)
    assert again is not None
    assert again.markdown == doc.markdown
    assert client.document(Scope.USER, uuid.uuid4().hex) is None
    page = client.call(operations.DOCUMENTS, scope=Scope.USER, path_prefix="/")
    assert [d.id for d in page.items] == [doc.summary.id]


def test_facts_asserted_listed_and_found(client: Client) -> None:
    [made] = client.assert_facts(
        Scope.USER,
        [
            FactInput(
                subject=EntityInput(type="Person", name="Ada"),
                predicate="works_at",
                object=EntityInput(type="Company", name="Analytical Engines"),
                valid_at="2024-01",
            )
        ],
    )
    assert made.created
    assert made.fact.subject.name == "Ada"
    assert made.fact.valid_at is not None
    assert made.fact.valid_at.year == 2024
    page = client.facts(Scope.USER, subject=EntityInput(type="Person", name="Ada"))
    assert [f.id for f in page.items] == [made.fact.id]
    assert page.items[0].provenance.origin == Origin.AGENT
    assert client.call(operations.FACT, scope=Scope.USER, id=made.fact.id) is not None
    hits = client.search(Scope.USER, "where does Ada work?", sources=[Source.FACTS])
    assert [h.fact.id for h in hits.hits if h.fact] == [made.fact.id]


def test_notes_searched_and_recalled(client: Client) -> None:
    client.memory_set(Scope.USER, "pets/cat", "The cat is called Moss.", embed=True)
    for find in (client.search, client.recall):
        result = find(Scope.USER, "what is the cat called?", top_k=3)
        assert result.hits[0].key == "pets/cat"
        assert result.hits[0].kind == Source.NOTES
        assert result.hits[0].score > 0
    entry = client.call(operations.MEMORY_INCREMENT, scope=Scope.USER, key="n", delta=2)
    assert entry.value == 2


def test_harvest_banks_spans_once(client: Client) -> None:
    spans = [SpanInput(text="I moved to Lisbon.", speaker="ada", source_id="m1")]
    first = client.harvest(spans, compaction_generation=1)
    assert (first.accepted, first.duplicates, first.compaction_generation) == (1, 0, 1)
    again = client.harvest(spans, compaction_generation=1)
    assert (again.accepted, again.duplicates) == (0, 1)
    assert client.call(operations.PENDING_WORK).queued == 1


def test_sql_memory(client: Client) -> None:
    done = client.call(
        operations.SQL_EXEC,
        scope=Scope.USER,
        statements=[
            SqlStatementInput("CREATE TABLE t (a INTEGER, b TEXT)"),
            SqlStatementInput("INSERT INTO t VALUES (?, ?)", args=[1, "x"]),
        ],
    )
    assert done.results[1].rows_affected == 1
    rows = client.sql_query(Scope.USER, "SELECT a, b FROM t WHERE a = ?", [1])
    assert (rows.columns, rows.rows, rows.truncated) == (["a", "b"], [[1, "x"]], False)
    with pytest.raises(InvalidArgument):
        client.sql_query(Scope.USER, "DELETE FROM t")


def test_a_foreign_or_missing_id_reads_alike(
    client: Client, live_server_url: str, token: Callable[..., str]
) -> None:
    doc = client.import_document(Scope.USER, "# Mine\n\ntext\n")
    other = token(f"t-{uuid.uuid4().hex[:10]}", "eve")
    with Client(url=live_server_url, token=other) as eve:
        assert eve.document(Scope.USER, doc.summary.id) is None
        with pytest.raises(NotFound) as foreign:
            eve.call(operations.DOCUMENT_HISTORY, scope=Scope.USER, id=doc.summary.id)
        absent = uuid.uuid4().hex
        with pytest.raises(NotFound) as missing:
            eve.call(operations.DOCUMENT_HISTORY, scope=Scope.USER, id=absent)
    assert foreign.value.message == missing.value.message.replace(absent, doc.summary.id)


def test_unknown_arguments_are_refused_before_sending(client: Client) -> None:
    with pytest.raises(TypeError, match="unknown arguments"):
        client.call(operations.SEARCH, scope=Scope.USER, query="q", topk=3)


def test_pinned_notes_lead_the_context_block(client: Client) -> None:
    pinned = client.memory_set(Scope.USER, "core/name", "The user is called Ada.", pinned=True)
    plain = client.memory_set(Scope.USER, "misc/tea", "Ada drinks green tea.")
    assert (pinned.pinned, plain.pinned) == (True, False)
    kept = client.memory_set(Scope.USER, "core/name", "The user is called Ada L.")
    assert kept.pinned is True  # pinned=None keeps the key's pin
    [version, *_] = client.memory_history(Scope.USER, "core/name").items
    assert version.pinned is True
    block = client.context(Scope.USER, "what does Ada drink?", budget_tokens=200)
    assert isinstance(block, ContextBlock)
    assert block.items[0].kind == ContextKind.PINNED
    assert block.items[0].id == "core/name"
    assert block.text.startswith("[note:core/name]")
    assert 0 < block.tokens <= 200
    assert "misc/tea" in {i.id for i in block.items if i.kind == ContextKind.HIT}
    with pytest.raises(InvalidArgument):
        client.context(Scope.USER, "x", budget_tokens=0)


def test_recall_controls_are_sent_and_reported(client: Client) -> None:
    client.memory_set(Scope.USER, "pets/dog", "The dog is called Rex.", embed=True)
    loose = client.recall(Scope.USER, "what is the dog called?", top_k=5)
    assert loose.hits
    strict = client.recall(
        Scope.USER,
        "what is the dog called?",
        top_k=5,
        min_score=1.0,
        weights=LegWeightsInput(vector=2.0, fulltext=0.5),
        max_per_document=1,
        recency_half_life="30d",
    )
    assert strict.controls is not None
    assert strict.controls.min_score == 1.0
    assert strict.controls.max_per_document == 1
    assert strict.controls.recency_half_life_seconds == 30 * 86400
    assert strict.hits == []  # a fused score never reaches 1.0
    assert strict.controls.below_min_score >= 1
    found = client.search(Scope.USER, "dog", top_k=5, weights=LegWeightsInput(vector=3.0))
    legs = [leg for h in found.hits if h.explain for leg in h.explain.legs]
    assert all(isinstance(leg.weight, float) for leg in legs)


def test_memory_file_round_trip(client: Client) -> None:
    path = "/memories/notes.md"
    made = client.update_memory_file(
        Scope.USER,
        MemoryFileCommandInput(MemoryFileEdit.CREATE, path=path, file_text="tea\ncoffee\n"),
    )
    assert made.path == path
    assert made.document_id is not None
    client.update_memory_file(
        Scope.USER,
        MemoryFileCommandInput(
            MemoryFileEdit.STR_REPLACE, path=path, old_str="coffee", new_str="cocoa"
        ),
    )
    seen = client.memory_file(Scope.USER, path)
    assert "cocoa" in seen.text
    assert "coffee" not in seen.text
    first = client.memory_file(Scope.USER, path, view_range=[1, 1])
    assert "tea" in first.text
    assert "cocoa" not in first.text
    with pytest.raises(NotFound):
        client.memory_file(Scope.USER, "/memories/none.md")
    with pytest.raises(InvalidArgument):
        client.memory_file(Scope.USER, "/etc/passwd")


def test_entities_merged_and_unmerged(client: Client) -> None:
    facts = [
        FactInput(
            subject=EntityInput(type="Person", name=name),
            predicate="likes",
            object_value=liked,
        )
        for name, liked in (("Ada Lovelace", "maths"), ("A. Lovelace", "poetry"))
    ]
    made = client.assert_facts(Scope.USER, facts)
    keep, fold = (a.fact.subject for a in made)
    assert keep.id != fold.id
    client.entity_duplicates(Scope.USER, limit=10)  # typed page, whatever it pairs
    merged = client.merge_entities(Scope.USER, keep.id, [fold.id])
    assert merged.id == keep.id
    assert "A. Lovelace" in merged.aliases
    [record] = client.entity_merges(Scope.USER, keep.id)
    assert (record.keep_id, record.merged_ids, record.undone_at) == (keep.id, [fold.id], None)
    assert record.facts_moved == 1
    restored = client.unmerge_entities(Scope.USER, record.id)
    assert [e.id for e in restored] == [keep.id, fold.id]
    assert "A. Lovelace" not in restored[0].aliases
    [undone] = client.entity_merges(Scope.USER, keep.id)
    assert undone.undone_at is not None
    with pytest.raises(NotFound):
        client.unmerge_entities(Scope.USER, uuid.uuid4().hex)
