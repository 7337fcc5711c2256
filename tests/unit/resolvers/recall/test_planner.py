"""The recall planner on a recording executor: exact fallback, over-fetch, scope binding."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Database, Row, Statement
from palimpsest.cypher.shards import Directory, ShardedDatabase, ShardRouter
from palimpsest.domain.ranking import fusion as pure
from palimpsest.identity import Role, Scope
from palimpsest.identity.scopes import scope_key
from palimpsest.resolvers.facts.ledger import TimeView
from palimpsest.resolvers.recall import planner as rr
from tests.unit.principals import principal
from tests.unit.recording import NOW, Answer, RecordingExecutor, services

DOCS = frozenset({pure.Source.DOCUMENTS})


def chunk_rows(n: int, live: int, prefix: str = "c") -> list[Row]:
    """A vector leg's answer: one record of parallel lists, best first."""
    return [
        {
            "ids": [f"{prefix}{i:031d}" for i in range(n)],
            "scores": [1.0 - i / 1000 for i in range(n)],
            "live": [i < live for i in range(n)],
        }
    ]


def loaded(ids: list[str]) -> list[Row]:
    """The final load's one record: the chunks asked for, no notes or facts."""
    chunks = [
        {
            "id": i,
            "document_id": "d" * 32,
            "type": "paragraph",
            "text": f"text {i}",
            "observed_at": None,
            "created_at": NOW,
            "tenant_id": "acme",
            "scope": "USER",
        }
        for i in ids
    ]
    return [{"notes": [], "chunks": chunks, "facts": []}]


NO_PEAKS = {"max_tf": 0, "max_ratio": 0.0, "bounded": False}


def scope_of(rows: int) -> list[Row]:
    """The term statistics of a scope holding ``rows`` chunks."""
    return [{"kind": "chunk", "term": "", "df": rows, "len": 10 * rows, **NO_PEAKS}]


STATS = ("READ_TERM_STATS", "READ_TEXT_SIDE")


def stats_read(statement: Statement, rows: list[Row]) -> list[Row]:
    """The statistics as either statement returns them. ``READ_TEXT_SIDE`` holds no rows
    here (as for kinds whose query terms the scope counts on many rows): the legs read as
    they do on a big scope (the held rows are tests/unit/resolvers/recall/test_text.py's)."""
    if statement.name == "READ_TERM_STATS":
        return rows
    return [{"stats": rows, "memory": None, "chunk": None, "fact": None}]


def answering(legs: Answer, rows: int = 5000) -> Answer:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name in STATS:
            return stats_read(statement, scope_of(rows))
        if statement.name == "LOAD_HITS":
            return loaded(params["chunks"])
        if statement.name.endswith("_PASSAGES"):
            return []  # a scope of short chunks: no passages (test_passages.py has them)
        return legs(statement, params)

    return answer


def request(top_k: int = 10, mode: rr.Mode = rr.Mode.VECTOR) -> rr.RecallRequest:
    return rr.RecallRequest(
        query="where is the checkout service",
        top_k=top_k,
        sources=DOCS,
        view=TimeView(as_of=NOW),
        mode=mode,
    )


async def test_a_short_index_read_falls_back_to_an_exact_scan(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "VECTOR_CHUNKS":
            return chunk_rows(3, live=3, prefix="a")  # fewer than asked: a small scope
        return chunk_rows(5, live=5, prefix="e")

    svc, recorder = services(answering(answer), tmp_path)
    result = await rr.recall(svc, principal(), [Scope.USER], request())
    legs = [c for c in recorder.calls if c.name.endswith("_CHUNKS") and "LOAD" not in c.name]
    assert [c.name for c in legs] == ["VECTOR_CHUNKS", "EXACT_CHUNKS"]
    assert legs[0].params["k"] == rr.ANN_FLOOR  # the ANN search is asked for the floor
    assert legs[1].params["k"] == 20  # the exact scan for the pool, 2 x topK
    assert [h.id[0] for h in result.hits] == ["e"] * 5  # the exact answer replaced the short one
    alice = scope_key("acme", Scope.USER, "alice")
    assert {c.params["scope_key"] for c in recorder.calls} == {alice}


async def test_filters_that_thin_a_full_page_make_the_leg_over_fetch(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        k = int(params["k"])
        return chunk_rows(k, live=2 if k == rr.ANN_FLOOR else 20)

    svc, recorder = services(answering(answer), tmp_path)
    result = await rr.recall(svc, principal(), [Scope.USER], request())
    legs = [c for c in recorder.calls if c.name == "VECTOR_CHUNKS"]
    assert len(legs) == len([c for c in recorder.calls if "_CHUNKS" in c.name])  # no exact scan
    assert [c.params["k"] for c in legs] == [rr.ANN_FLOOR, 4 * rr.ANN_FLOOR]  # past the page
    assert len(result.hits) == 10
    assert all(h.vector_rank is not None for h in result.hits)


async def test_over_fetch_stops_at_the_cap(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        return chunk_rows(int(params["k"]), live=1)  # filters keep almost nothing, always

    svc, recorder = services(answering(answer), tmp_path)
    await rr.recall(svc, principal(), [Scope.USER], request())
    asked = [c.params["k"] for c in recorder.calls if c.name == "VECTOR_CHUNKS"]
    assert asked[-1] == rr.MAX_FETCH
    assert asked == sorted(asked)
    assert len(asked) < 6


async def test_a_small_scope_is_read_whole_from_the_index(tmp_path: Path) -> None:
    svc, recorder = services(answering(lambda s, p: chunk_rows(3, live=3), rows=3), tmp_path)
    result = await rr.recall(svc, principal(), [Scope.USER], request())
    assert "VECTOR_CHUNKS" not in recorder.names()
    assert "EXACT_CHUNKS" not in recorder.names()  # the index answered the whole scope
    [whole] = [c for c in recorder.calls if c.name == "WHOLE_CHUNKS"]
    assert whole.params["k"] == 20
    assert whole.params["n"] >= 3 + 16  # the scope's rows, with room for newer ones
    assert len(result.hits) == 3


async def test_a_small_scope_the_index_does_not_answer_whole_is_scanned(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "WHOLE_CHUNKS":
            return [{"ids": [], "scores": [], "live": []}]  # not every row: no rows at all
        return chunk_rows(3, live=3, prefix="e")

    svc, recorder = services(answering(answer, rows=3), tmp_path)
    result = await rr.recall(svc, principal(), [Scope.USER], request())
    assert [c.name for c in recorder.calls if c.name.endswith("_CHUNKS")] == [
        "WHOLE_CHUNKS",
        "EXACT_CHUNKS",
    ]
    assert [c.params["k"] for c in recorder.calls if c.name == "EXACT_CHUNKS"] == [20]
    assert [h.id[0] for h in result.hits] == ["e"] * 3


async def test_each_scope_of_a_merged_read_runs_bound_to_its_own_key(tmp_path: Path) -> None:
    def legs(statement: Statement, params: dict[str, Any]) -> list[Row]:
        return []

    svc, recorder = services(answering(legs), tmp_path)
    await rr.recall(svc, principal(), [Scope.USER, Scope.TENANT], request(mode=rr.Mode.HYBRID))
    alice, team = scope_key("acme", Scope.USER, "alice"), scope_key("acme", Scope.TENANT, "acme")
    for name in ("READ_TEXT_SIDE", "EXACT_CHUNKS"):
        assert {c.params["scope_key"] for c in recorder.calls if c.name == name} == {alice, team}
    # No statistics for the query terms: no full-text enumeration is needed at all.
    assert "TERMS_CHUNKS" not in recorder.names()


async def test_full_text_legs_ask_lucene_only_inside_their_own_scope(tmp_path: Path) -> None:
    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name in STATS:
            return stats_read(
                statement,
                [
                    *scope_of(100),
                    {"kind": "chunk", "term": "checkout", "df": 3, "len": 0, **NO_PEAKS},
                ],
            )
        if statement.name == "TERMS_CHUNKS":
            return [
                {
                    "ids": [f"t{i:031d}" for i in range(3)],
                    "lens": [10, 10, 10],
                    "live": [True, True, True],
                    "ft": ["checkout order", "checkout", "cart checkout"],
                    "tf": [[1, 4], [2], [5, 3]],
                }
            ]
        if statement.name == "LOAD_HITS":
            return loaded(params["chunks"])
        return []

    svc, recorder = services(answer, tmp_path)
    who = [Scope.USER, Scope.TENANT]
    result = await rr.recall(svc, principal(), who, request(mode=rr.Mode.FULLTEXT))
    calls = [c for c in recorder.calls if c.name == "TERMS_CHUNKS"]
    assert len(calls) == 2
    for call in calls:
        assert (
            call.params["lucene"] == f'scope_key:"{call.params["scope_key"]}" AND (ft:"checkout")'
        )
        assert call.params["k"] == 4  # the scope's own count of such rows, plus one
    # Ranked by BM25 within each scope: the highest term frequency first in each list.
    assert [h.fulltext_rank for h in result.hits][:2] == [1, 1]
    assert result.hits[0].id == f"t{2:031d}"


def hybrid_answer(
    n: int = 50, epoch_ms: list[int | None] | None = None, text_ms: int | None = None
) -> Answer:
    """A 5000-row scope: the approximate leg answers ``n`` live chunks (with their cues), the
    full-text leg three rows holding the query's one known term (``text_ms``: the observed
    time of the middle one, read with the cues of the full-text pool)."""

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name in STATS:
            return stats_read(
                statement,
                [
                    *scope_of(5000),
                    {"kind": "chunk", "term": "checkout", "df": 3, "len": 0, **NO_PEAKS},
                ],
            )
        if statement.name == "VECTOR_CHUNKS":
            rows = chunk_rows(n, live=n)
            stamps = epoch_ms or [None] * n
            rows[0]["cues"] = [[stamps[i], None, False, None, False] for i in range(n)]
            return rows
        if statement.name == "TERMS_CHUNKS":
            return [
                {
                    "ids": [f"c{i:031d}" for i in (7, 8, 9)],
                    "lens": [10, 10, 10],
                    "live": [True, True, True],
                    "ft": ["checkout", "checkout", "checkout"],
                    "tf": [[1], [1], [1]],
                }
            ]
        if statement.name == "CUES_CHUNKS":
            stamp = {f"c{8:031d}": text_ms}
            cues = [[stamp.get(i), None, False, None, False] for i in params["ids"]]
            return [{"ids": list(params["ids"]), "cues": cues}]
        if statement.name == "LOAD_HITS":
            return loaded(params["chunks"])
        return []

    return answer


async def test_a_hybrid_search_is_two_read_transactions_and_loads_only_the_top_k(
    tmp_path: Path,
) -> None:
    svc, recorder = services(hybrid_answer(), tmp_path)
    result = await rr.recall(svc, principal(), [Scope.USER], request(5, rr.Mode.HYBRID))
    assert len(result.hits) == 5
    # The text side (statistics, then the full-text leg) and the vector side (the vector
    # leg, then the final load of the fused top-k) in one transaction each.
    assert sorted(recorder.transactions) == [
        ["READ_TEXT_SIDE", "TERMS_CHUNKS", "CUES_CHUNKS"],
        # Passages are off by default: the chunks' vector leg reads none.
        ["VECTOR_CHUNKS", "LOAD_HITS"],
    ]
    assert not any(c.write for c in recorder.calls)
    [load] = [c for c in recorder.calls if c.name == "LOAD_HITS"]
    assert load.params["chunks"] == [h.id for h in result.hits]  # 5 of 10 candidates
    assert load.params["notes"] == load.params["facts"] == []
    # Pools of 10: the vector leg ranks rows 0-9, the full-text leg rows 7, 8, 9. Rows 7 and
    # 8 (high in both) rank first; rows 0 and 1 (top of the vector leg, ranked just past the
    # full-text pool there) outrank row 9 (last of both); the load's text reaches the hits.
    assert [h.id for h in result.hits] == [f"c{i:031d}" for i in (7, 8, 0, 1, 9)]
    assert result.hits[2].fulltext_rank is None
    assert [h.text for h in result.hits] == [f"text {h.id}" for h in result.hits]


async def test_a_full_text_search_is_one_read_transaction(tmp_path: Path) -> None:
    svc, recorder = services(hybrid_answer(), tmp_path)
    result = await rr.recall(svc, principal(), [Scope.USER], request(2, rr.Mode.FULLTEXT))
    assert recorder.transactions == [["READ_TEXT_SIDE", "TERMS_CHUNKS", "CUES_CHUNKS", "LOAD_HITS"]]
    assert len(result.hits) == 2


# Observed between 1 and 3 May 2024 (missing times excluded), and a time inside it.
MAY_1_TO_3 = pure.Window(
    datetime(2024, 5, 1, tzinfo=UTC),
    datetime(2024, 5, 3, tzinfo=UTC),
    pure.Missing.REQUIRE,
    timedelta(0),
)
INSIDE_MS = int(datetime(2024, 5, 2, tzinfo=UTC).timestamp() * 1000)


async def test_a_full_text_leg_reads_the_cues_of_its_pool_only(tmp_path: Path) -> None:
    # The leg scores every row holding the query's terms without their cues, then reads the
    # cues of the rows it kept; the time window reads those.
    svc, recorder = services(hybrid_answer(text_ms=INSIDE_MS), tmp_path)
    req = replace(request(1, rr.Mode.FULLTEXT), window=MAY_1_TO_3, pool=2)
    result = await rr.recall(svc, principal(), [Scope.USER], req)
    [cues] = [c for c in recorder.calls if c.name == "CUES_CHUNKS"]
    assert cues.params["ids"] == [f"c{i:031d}" for i in (7, 8)]  # the pool of 2, of 3 rows
    assert [h.id for h in result.hits] == [f"c{8:031d}"]
    assert result.hits[0].observed_at == datetime(2024, 5, 2, tzinfo=UTC)


async def test_the_time_window_reads_the_legs_cues_before_any_load(tmp_path: Path) -> None:
    outside = int(datetime(2020, 1, 1, tzinfo=UTC).timestamp() * 1000)
    stamps: list[int | None] = [outside] * 50
    stamps[3] = stamps[12] = INSIDE_MS
    svc, recorder = services(hybrid_answer(epoch_ms=stamps), tmp_path)
    req = replace(request(10, rr.Mode.VECTOR), window=MAY_1_TO_3)
    result = await rr.recall(svc, principal(), [Scope.USER], req)
    assert [h.id for h in result.hits] == [f"c{i:031d}" for i in (3, 12)]
    assert [h.observed_at for h in result.hits] == [datetime(2024, 5, 2, tzinfo=UTC)] * 2
    assert result.time_filter is not None
    assert (result.time_filter.in_window, result.time_filter.out_of_window) == (2, 18)
    [load] = [c for c in recorder.calls if c.name == "LOAD_HITS"]
    assert load.params["chunks"] == [h.id for h in result.hits]


async def test_kinds_the_scope_holds_no_rows_of_run_no_leg(tmp_path: Path) -> None:
    svc, recorder = services(hybrid_answer(), tmp_path)
    req = replace(request(5, rr.Mode.HYBRID), sources=pure.SEARCH_DEFAULT)
    result = await rr.recall(svc, principal(), [Scope.USER], req)
    assert len(result.hits) == 5
    # Its statistics count chunks only: neither notes nor facts are searched or loaded.
    legs = {c.name for c in recorder.calls} - {"READ_TEXT_SIDE", "LOAD_HITS"}
    assert legs == {"VECTOR_CHUNKS", "TERMS_CHUNKS", "CUES_CHUNKS"}


async def test_with_passages_on_the_chunks_vector_leg_asks_them(tmp_path: Path) -> None:
    svc, recorder = services(hybrid_answer(), tmp_path, passage_max=8)
    await rr.recall(svc, principal(), [Scope.USER], request(5, rr.Mode.HYBRID))
    # None stored here: the index reads short, so the scope's passages are scanned.
    assert ["VECTOR_CHUNKS", "VECTOR_PASSAGES", "EXACT_PASSAGES", "LOAD_HITS"] in (
        recorder.transactions
    )


async def test_the_approximate_leg_asks_for_the_configured_floor(tmp_path: Path) -> None:
    svc, recorder = services(hybrid_answer(), tmp_path, recall_ann_floor=400)
    req = replace(request(5, rr.Mode.VECTOR), levers=pure.Levers.of(svc.settings))
    await rr.recall(svc, principal(), [Scope.USER], req)
    assert [c.params["k"] for c in recorder.calls if c.name == "VECTOR_CHUNKS"] == [400]


def _answer(scope: Scope, *scores: float) -> rr.RecallResult:
    hits = [
        rr.Hit(pure.Source.NOTES, scope, f"{scope.value}-{i}", "", score=s)
        for i, s in enumerate(scores)
    ]
    return rr.RecallResult(hits=hits, sources_applied=True, scopes=[scope])


def test_answers_of_two_shards_are_fused_by_rank_not_score() -> None:
    tenant = _answer(Scope.USER, 0.03, 0.02, 0.01)
    everyone = _answer(Scope.GLOBAL, 0.9, 0.8)  # another fusion's scale: not comparable
    fused = rr.by_rank([tenant, everyone], top_k=4)
    assert [h.id for h in fused.hits] == ["USER-0", "GLOBAL-0", "USER-1", "GLOBAL-1"]
    assert [h.score for h in fused.hits] == [0.03, 0.9, 0.02, 0.8], "each keeps its own score"
    assert fused.scopes == [Scope.USER, Scope.GLOBAL]
    assert fused.sources_applied
    assert rr.by_rank([tenant], top_k=10).hits == tenant.hits


async def test_a_recall_reaching_global_on_another_shard_asks_each_shard_its_scopes(
    tmp_path: Path,
) -> None:
    def legs(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "LOOKUP_TENANT_SHARD":
            return [{"shard": "b"}]  # globex lives on b; GLOBAL on a, the designated shard
        glob = params.get("scope") == "GLOBAL"
        return chunk_rows(3, live=3, prefix="g" if glob else "u")

    answer = answering(legs)
    svc, _ = services(answer, tmp_path)
    a, b = RecordingExecutor(answer), RecordingExecutor(answer)
    router = ShardRouter({"a": a, "b": b}, "a", Directory(Database(a), ("a", "b")))
    svc = replace(svc, db=ShardedDatabase(router))
    who = principal(tenant_id="globex", roles=frozenset({Role.OPERATOR}))
    who = replace(who, memory_scopes=frozenset({Scope.USER, Scope.GLOBAL}))
    result = await rr.recall(svc, who, [Scope.USER, Scope.GLOBAL], request(top_k=4))
    user, glob = scope_key("globex", Scope.USER, "alice"), scope_key("", Scope.GLOBAL, "")
    assert {c.params["scope_key"] for c in b.calls if "scope_key" in c.params} == {user}
    assert {c.params["scope_key"] for c in a.calls if "scope_key" in c.params} == {glob}
    assert result.scopes == [Scope.USER, Scope.GLOBAL]
    assert [h.id[0] for h in result.hits] == ["u", "g", "u", "g"], "fused by rank"
