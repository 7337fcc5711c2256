"""The export's JSON Lines encoding and the import's checks of a whole file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.resolvers.portability import importer
from palimpsest.resolvers.portability.export import dumps, loads
from palimpsest.resolvers.portability.importer import check_export

HEADER = dumps(
    {"kind": "header", "format": "palimpsest-export", "version": 1, "tenant": "t", "user": "u"}
)


def test_datetimes_and_nested_values_round_trip() -> None:
    at = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)
    record = {
        "kind": "fact",
        "props": {"created_at": at, "list": ["a", "b"], "n": 1},
        "sources": [{"created_at": at + timedelta(seconds=1)}],
    }
    line = dumps(record)
    assert '"$datetime":"2026-11-30T12:00:00.123456+00:00"' in line
    assert loads(line) == record
    other = datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=2)))
    assert loads(dumps({"at": other}))["at"] == other


def test_a_whole_file_is_checked_before_anything_is_loaded() -> None:
    memory = dumps({"kind": "memory", "props": {"key": "k"}})
    good = [HEADER, memory, dumps({"kind": "end", "records": 1})]
    assert check_export(good)["user"] == "u"
    for broken in (
        good[:-1],
        [good[1], *good],
        [HEADER.replace('"version":1', '"version":2'), *good[1:]],
        [*good[:-1], dumps({"kind": "end", "records": 2})],
        [*good, memory],
        [HEADER, "[1, 2]", *good[1:]],
    ):
        with pytest.raises(InvalidArgument):
            check_export(broken)


def _merge_file(kind: str, props: object) -> list[str]:
    return [HEADER, dumps({"kind": kind, "props": props}), dumps({"kind": "end", "records": 1})]


def test_merge_records_must_hold_what_unmerge_reads() -> None:
    at = datetime(2026, 12, 2, tzinfo=UTC)
    merge = {"id": "m1", "keep_id": "k", "merged_ids": ["a"], "created_at": at, "undone_at": None}
    aside = {
        "id": "a",
        "type": "person",
        "name": "Bob",
        "normalized_name": "bob",
        "merged_into": "k",
        "merge_id": "m1",
    }
    assert check_export(_merge_file("entity_merge", merge))["user"] == "u"
    assert check_export(_merge_file("merged_entity", aside))["user"] == "u"
    for kind, props in (
        ("entity_merge", {**merge, "id": None}),
        ("entity_merge", {**merge, "merged_ids": "a"}),
        ("entity_merge", {**merge, "merged_ids": []}),
        ("entity_merge", {**merge, "created_at": "2026-12-02"}),
        ("merged_entity", {k: v for k, v in aside.items() if k != "merged_into"}),
        ("merged_entity", {**aside, "merge_id": ""}),
        ("merged_entity", [1]),
    ):
        with pytest.raises(InvalidArgument, match=f"line 2: {kind}|line 2: a {kind}"):
            check_export(_merge_file(kind, props))


def test_an_entity_record_without_a_type_gets_the_shared_label() -> None:
    # A hand-edited file: the import labels the entity rather than failing mid-write.
    assert importer._label_of({"type": "open source project"}) == "Type_OpenSourceProject"
    assert importer._label_of({}) == importer._label_of({"type": None}) == "Type_Other"


def _entity_file(version_mentions: object) -> list[str]:
    entity: dict[str, object] = {"kind": "entity", "props": {"id": "e"}, "mentions": []}
    if version_mentions is not None:
        entity["version_mentions"] = version_mentions
    return [HEADER, dumps(entity), dumps({"kind": "end", "records": 1})]


def test_a_version_mention_must_name_its_closed_version() -> None:
    # Import matches the version by (document, id, first revision): one naming none would
    # be dropped silently, so the file is refused before anything is written.
    named = {"document_id": "d", "chunk_id": "c", "from_revision": 1, "props": {"start": 0}}
    assert check_export(_entity_file(None))["user"] == "u"  # minor 3 and older
    assert check_export(_entity_file([named]))["user"] == "u"
    for broken in (
        {"a": named},
        [{k: v for k, v in named.items() if k != "document_id"}],
        [{**named, "chunk_id": ""}],
        [{**named, "from_revision": "1"}],
        [{**named, "from_revision": True}],
        [{**named, "props": None}],
        [named, "c"],
    ):
        with pytest.raises(InvalidArgument, match="line 2: entity version_mentions"):
            check_export(_entity_file(broken))
