"""One scope's retention sweep (``resolvers.cycle.sweep``) on a recording executor: each kind
of row in counted batches under the scope's lock, the windows the policy keeps for ever
skipped, the counters moved with what went, and the walk over scopes."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.identity import Scope
from palimpsest.identity.scopes import scope_key, swept_ref
from palimpsest.resolvers.cycle import sweep
from palimpsest.resolvers.cycle.harvesting import Status
from palimpsest.resolvers.tenant.retention import RetentionPolicy
from tests.unit.recording import NOW, RecordingExecutor, services

REF = swept_ref("acme", "USER", "alice")
DAY = 86_400
KEEP_ALL = RetentionPolicy(0, 0, 0, ())
WINDOWS = RetentionPolicy(30 * DAY, 7 * DAY, DAY, ("versions_seconds",))
DELETES = {
    "DELETE_OLD_VERSIONS",
    "DELETE_OLD_TOMBSTONES",
    "MARK_SWEPT_REVISIONS",
    "DELETE_SWEPT_CHUNK_VERSIONS",
    "DELETE_SWEPT_REVISIONS",
    "DELETE_DONE_SPANS",
}


class Scopes:
    """Rows past keeping, per statement; the scope's lock is there unless ``gone``."""

    def __init__(self, left: dict[str, int], *, gone: bool = False) -> None:
        self.left = dict(left)
        self.gone = gone
        self.walk: list[Row] = []
        self.retention: Row | None = None

    def take(self, name: str, batch: int) -> int:
        n = min(self.left.get(name, 0), batch)
        self.left[name] = self.left.get(name, 0) - n
        return n

    def __call__(self, statement: Statement, params: dict[str, Any]) -> list[Row]:
        name = statement.name
        if name == "LOCK_SWEPT_SCOPE":
            return [] if self.gone else [{"locked": True}]
        if name == "ARCHIVE_EXPIRED_NOTES":
            n = self.take(name, params["batch"])
            return [{"ft": None, "ft_tf": None, "speaker": None, "bytes": 10}] * n
        if name in DELETES:
            n = self.take(name, params["batch"])
            return [{"removed": n, "latest": NOW - timedelta(days=40)}]
        if name == "SWEEP_SCOPES":
            after = [r for r in self.walk if r["scope_key"] > params["after"]]
            return after[: params["limit"]]
        if name == "READ_RETENTION":
            return [self.retention] if self.retention else []
        return []


def sweeping(tmp_path: Path, scopes: Scopes) -> tuple[Any, RecordingExecutor]:
    return services(scopes, tmp_path)


async def test_each_kind_goes_in_batches_and_is_counted(tmp_path: Path) -> None:
    scopes = Scopes(
        {
            "ARCHIVE_EXPIRED_NOTES": 3,
            "DELETE_OLD_VERSIONS": 2,
            "DELETE_OLD_TOMBSTONES": 1,
            "DELETE_SWEPT_CHUNK_VERSIONS": 4,
            "DELETE_SWEPT_REVISIONS": 1,
            "DELETE_DONE_SPANS": 5,
        }
    )
    svc, recorder = sweeping(tmp_path, scopes)
    done = await sweep.sweep_scope(svc, REF, WINDOWS, NOW, batch=2)
    assert done.as_dict() == {
        "scopes": 1,
        "expired_notes": 3,
        "versions": 2,
        "tombstones": 1,
        "document_revisions": 1,
        "chunk_versions": 4,
        "done_spans": 5,
        "rows": 16,
        "batches": done.batches,
    }
    # Batches of two until one is short: 2+1 notes, 2+0 versions, 1 tombstone, one mark,
    # 2+2+0 chunk versions, 1 revision, 2+2+1 spans, and one recount.
    assert done.batches == 2 + 2 + 1 + 1 + 3 + 1 + 3 + 1
    names = recorder.names()
    assert names.count("RECOUNT_NOTES") == 1
    # The windows: versions 30 days back, tombstones 7, done spans one.
    cutoffs = {c.name: c.params.get("cutoff") for c in recorder.calls if c.name in DELETES}
    assert cutoffs["DELETE_OLD_VERSIONS"] == NOW - timedelta(days=30)
    assert cutoffs["DELETE_OLD_TOMBSTONES"] == NOW - timedelta(days=7)
    assert cutoffs["DELETE_SWEPT_REVISIONS"] == NOW - timedelta(days=30)
    assert cutoffs["DELETE_DONE_SPANS"] == NOW - timedelta(days=1)
    [spans, *_] = [c for c in recorder.calls if c.name == "DELETE_DONE_SPANS"]
    assert spans.params["done"] == Status.DONE


async def test_the_counters_move_with_what_went(tmp_path: Path) -> None:
    scopes = Scopes({"ARCHIVE_EXPIRED_NOTES": 2, "DELETE_OLD_VERSIONS": 3})
    svc, recorder = sweeping(tmp_path, scopes)
    await sweep.sweep_scope(svc, REF, WINDOWS, NOW, batch=5)
    counted = [
        (c.params["bytes"], c.params["versions"], c.params["latest"], c.params["scope_key"])
        for c in recorder.calls
        if c.name == "COUNT_SWEPT"
    ]
    assert counted == [
        (20, 2, None, REF.scope_key),  # two notes of ten bytes moved into the past
        (0, -3, NOW - timedelta(days=40), REF.scope_key),
    ]


async def test_the_scopes_lock_is_taken_first_but_not_for_the_documents(tmp_path: Path) -> None:
    scopes = Scopes({"DELETE_OLD_VERSIONS": 1, "DELETE_SWEPT_REVISIONS": 1})
    svc, recorder = sweeping(tmp_path, scopes)
    await sweep.sweep_scope(svc, REF, WINDOWS, NOW, batch=5)
    by_statement = {name: t for t in recorder.transactions for name in t if name in DELETES}
    assert by_statement["DELETE_OLD_VERSIONS"][0] == "LOCK_SWEPT_SCOPE"
    assert "LOCK_SWEPT_SCOPE" not in by_statement["DELETE_SWEPT_REVISIONS"]
    assert "LOCK_SWEPT_SCOPE" not in by_statement["MARK_SWEPT_REVISIONS"]


async def test_a_policy_that_keeps_everything_deletes_nothing(tmp_path: Path) -> None:
    scopes = Scopes({"DELETE_OLD_VERSIONS": 9, "DELETE_DONE_SPANS": 9})
    svc, recorder = sweeping(tmp_path, scopes)
    done = await sweep.sweep_scope(svc, REF, KEEP_ALL, NOW, batch=5)
    assert done.rows == 0
    assert not DELETES & set(recorder.names())
    assert "RECOUNT_NOTES" not in recorder.names()


async def test_a_scope_deleted_meanwhile_has_no_lock_and_nothing_is_removed(
    tmp_path: Path,
) -> None:
    scopes = Scopes({"ARCHIVE_EXPIRED_NOTES": 3, "DELETE_OLD_VERSIONS": 3}, gone=True)
    svc, recorder = sweeping(tmp_path, scopes)
    done = await sweep.sweep_scope(svc, REF, WINDOWS, NOW, batch=5)
    assert (done.expired_notes, done.versions) == (0, 0)
    assert "ARCHIVE_EXPIRED_NOTES" not in recorder.names()
    assert "DELETE_OLD_VERSIONS" not in recorder.names()


def walked(tenant: str, scope: str, owner: Any, key: str | None = None) -> Row:
    computed = scope_key(tenant, Scope(scope), owner) if isinstance(owner, str) else "x"
    return {"tenant_id": tenant, "scope": scope, "owner_id": owner, "scope_key": key or computed}


async def test_a_page_sweeps_each_scope_under_its_tenants_policy_and_skips_bad_rows(
    tmp_path: Path,
) -> None:
    scopes = Scopes({"DELETE_OLD_VERSIONS": 1})
    scopes.walk = sorted(
        [
            walked("acme", "USER", "alice"),
            walked("acme", "USER", "bob"),
            walked("acme", "USER", "carol", key="f" * 32),  # a key its parts do not make
            walked("acme", "USER", None),  # no owner
        ],
        key=lambda r: r["scope_key"],
    )
    scopes.retention = {
        "versions_seconds": DAY,
        "tombstones_seconds": None,
        "done_spans_seconds": None,
    }
    svc, recorder = sweeping(tmp_path, scopes)
    page = await sweep.sweep_page(svc, "", scopes=10, batch=5)
    assert page.skipped == 2
    assert page.swept.scopes == 2
    assert page.swept.versions == 1
    assert page.after is None  # fewer rows than asked: the walk is over
    # The tenant's policy is read once for both of its scopes.
    assert recorder.names().count("READ_RETENTION") == 1
    cutoffs = {c.params["cutoff"] for c in recorder.calls if c.name == "DELETE_OLD_VERSIONS"}
    assert cutoffs == {NOW - timedelta(days=1)}


async def test_a_full_page_names_where_the_next_starts(tmp_path: Path) -> None:
    scopes = Scopes({})
    scopes.walk = sorted(
        [walked("acme", "USER", u) for u in ("a", "b", "c")], key=lambda r: r["scope_key"]
    )
    svc, recorder = sweeping(tmp_path, scopes)
    page = await sweep.sweep_page(svc, "", scopes=2, batch=5, tenant="acme")
    assert page.after == scopes.walk[1]["scope_key"]
    [walk] = [c for c in recorder.calls if c.name == "SWEEP_SCOPES"]
    assert walk.params == {"after": "", "limit": 2, "tenant": "acme"}
    rest = await sweep.sweep_page(svc, page.after or "", scopes=2, batch=5)
    assert (rest.swept.scopes, rest.after) == (1, None)


async def test_global_is_swept_under_the_servers_settings(tmp_path: Path) -> None:
    scopes = Scopes({"DELETE_OLD_VERSIONS": 1})
    scopes.walk = [walked("", "GLOBAL", "")]
    svc, recorder = services(scopes, tmp_path, retention_versions_seconds=DAY)
    page = await sweep.sweep_page(svc, "", scopes=5, batch=5)
    assert page.swept.versions == 1
    assert "READ_RETENTION" not in recorder.names()


def test_sweeps_add_up() -> None:
    a = sweep.Swept(scopes=1, versions=2, batches=3)
    a.add(sweep.Swept(scopes=1, tombstones=4, done_spans=1, batches=2))
    assert (a.scopes, a.rows, a.batches) == (2, 7, 5)
