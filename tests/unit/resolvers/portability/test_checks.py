"""The import's first-pass shape check (``resolvers.import_check``): a record of every kind as
the export writes it passes; one missing or mistyping a field the loader or the statements
read, or holding a value Neo4j cannot store, is refused naming its line and field."""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.resolvers.portability.checks import RECORDS, check_record
from palimpsest.resolvers.portability.importer import KINDS

AT = datetime(2026, 12, 2, 9, 30, tzinfo=UTC)
SECRET = "the words of the note"
DROP = object()  # remove the field instead of setting it

VALID: dict[str, dict[str, Any]] = {
    "memory": {
        "props": {
            "key": "k",
            "value": '"v"',
            "text": SECRET,
            "embed_mode": "text",
            "ft": "word note",
            "ft_tf": [1, 1],
            "ft_len": 2,
            "created_at": AT,
            "pinned": False,
            "years": [],
        }
    },
    "memory_version": {"props": {"id": "mv", "key": "k", "deleted": True, "expired_at": AT}},
    "document": {"props": {"id": "d", "title": "T", "revision": 2, "quota_bytes": 10}},
    "chunk": {
        "props": {
            "id": "c1",
            "document_id": "d",
            "index": 0,
            "position": 0,
            "text": SECRET,
            "ft": "word",
            "ft_tf": [2],
            "ft_len": 2,
            "language": "python",
        },
        "parent_id": None,
        "next_id": "c2",
    },
    "chunk_version": {
        "props": {"id": "c1", "document_id": "d", "from_revision": 1, "to_revision": 2}
    },
    "document_revision": {"props": {"document_id": "d", "revision": 1, "deleted": False}},
    "entity": {
        "props": {"id": "e", "type": "person", "name": "Bob", "normalized_name": "bob"},
        "mentions": [{"chunk_id": "c1", "props": {"start": 0, "end": 3, "merge_ids": ["m"]}}],
        "version_mentions": [
            {"document_id": "d", "chunk_id": "c1", "from_revision": 1, "props": {"start": 0}}
        ],
    },
    "merged_entity": {
        "props": {
            "id": "a",
            "type": "person",
            "name": "Bobby",
            "normalized_name": "bobby",
            "merged_into": "e",
            "merge_id": "m",
        }
    },
    "entity_merge": {"props": {"id": "m", "keep_id": "e", "merged_ids": ["a"], "created_at": AT}},
    "fact_pair": {
        "props": {
            "id": "p",
            "older_id": "f",
            "newer_id": "g",
            "cosine": 0.9,
            "created_at": AT,
            "verdict": "conflict",
            "reason": SECRET,
        }
    },
    "fact": {
        "props": {
            "id": "f",
            "text": SECRET,
            "natural_key": "nk",
            "ft": "bob acme",
            "ft_tf": [1, 1],
            "ft_len": 2,
            "years": [2026],
        },
        "subject_id": "e",
        "object_id": "o",
        "sources": [{"key": "s", "chunk_id": "c1", "start": 0, "end": 3, "created_at": AT}],
    },
    "span": {"props": {"id": "p", "status": "pending", "text": SECRET}},
    "tenant_fact": {
        "props": {"id": "tf", "natural_key": "tk", "text": SECRET},
        "subject": {"id": "e", "type": "person", "name": "Bob", "normalized_name": "bob"},
        "object": {"id": "o", "type": "org", "name": "Acme", "normalized_name": "acme"},
        "written": False,
        "sources": [{"key": "s", "shared": True}],
    },
    "sql_schema": {"type": "table", "name": "notes", "sql": "CREATE TABLE notes (body TEXT)"},
    "sql_row": {
        "table": "notes",
        "columns": ["id", "body", "raw"],
        "values": [1, SECRET, {"$base64": "AAEC"}],
    },
}


def record(kind: str, path: str | None = None, value: Any = DROP) -> dict[str, Any]:
    """``kind``'s valid record, with ``path`` (``a.b[0].c``) set to ``value`` or removed."""
    r = {"kind": kind, **copy.deepcopy(VALID[kind])}
    if path is None:
        return r
    steps: list[str | int] = [int(s) if s.isdigit() else s for s in re.findall(r"[^.\[\]]+", path)]
    target: Any = r
    for step in steps[:-1]:
        target = target[step]
    if value is DROP:
        del target[steps[-1]]
    else:
        target[steps[-1]] = value
    return r


def test_every_kind_is_checked() -> None:
    assert set(RECORDS) == set(VALID) == KINDS


@pytest.mark.parametrize("kind", sorted(VALID))
def test_a_record_as_the_export_writes_it_passes(kind: str) -> None:
    check_record(2, record(kind))


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("memory", "props.embed_mode", None),  # nulls in props are left unset
        ("memory", "props.ft_len", DROP),  # not counted: no terms needed
        ("memory", "props.local", datetime(2026, 1, 1)),
        ("memory", "props.times", [AT, AT]),
        ("memory", "props.scores", [0.5, 1.0]),
        ("memory", "props.flags", [True]),
        ("memory", "props.huge", -(2**63)),
        ("memory", "props.ft", ""),  # no terms, none counted
        ("memory_version", "props.ft_len", 3),  # past versions feed no statistics
        ("chunk", "next_id", None),
        ("chunk", "props.index", DROP),
        ("chunk_version", "props.from_revision", DROP),  # older versions have none
        ("entity", "version_mentions", DROP),  # minor 3 and older
        ("entity", "props.type", DROP),  # labelled Type_Other
        ("entity", "mentions", []),
        ("fact", "sources", []),
        ("tenant_fact", "written", True),
        ("sql_row", "values", [None, True, {"$float": "Infinity"}]),
    ],
)
def test_what_the_loader_tolerates_passes(kind: str, path: str, value: Any) -> None:
    check_record(2, record(kind, path, value))


BROKEN: list[tuple[str, str, Any, str]] = [
    # (kind, field changed, its new value (DROP: removed), the field the refusal names)
    ("memory", "props", DROP, "props must be an object"),
    ("memory", "props", [1], "props must be an object"),
    ("memory", "props.key", DROP, "props.key must be a string"),
    ("memory", "props.key", 1, "props.key must be a string"),
    ("memory", "props.text", 5, "props.text must be a string"),
    ("memory", "props.nested", {"a": 1}, "props.nested must be a property value"),
    ("memory", "props.tags", ["a", None], "props.tags must be a property value"),
    ("memory", "props.tags", [1, "a"], "props.tags must be a property value"),
    ("memory", "props.tags", [1, 1.5], "props.tags must be a property value"),
    ("memory", "props.tags", [True, 1], "props.tags must be a property value"),
    ("memory", "props.tags", [[1]], "props.tags must be a property value"),
    ("memory", "props.tags", [{"a": 1}], "props.tags must be a property value"),
    ("memory", "props.times", [AT, datetime(2026, 1, 1)], "props.times must be a property"),
    ("memory", "props.big", 2**63, "props.big must be a property value"),
    ("memory", "props.ft", DROP, "props.ft and props.ft_tf must be set"),
    ("memory", "props.ft_tf", [1], "props.ft_tf must be one frequency per term"),
    ("memory", "props.ft_tf", ["1", "1"], "props.ft_tf must be a list of integers"),
    ("memory", "props.ft_len", "2", "props.ft_len must be an integer"),
    ("memory", "props.speaker", ["me"], "props.speaker must be a string"),
    ("memory_version", "props.id", DROP, "props.id must be a string"),
    ("memory_version", "props.key", "", "props.key must be a string"),
    ("document", "props.id", None, "props.id must be a string"),
    ("chunk", "parent_id", DROP, "parent_id must be a string or null"),
    ("chunk", "next_id", 3, "next_id must be a string or null"),
    ("chunk", "props.id", DROP, "props.id must be a string"),
    ("chunk", "props.document_id", DROP, "props.document_id must be a string"),
    ("chunk", "props.position", "0", "props.position must be an integer"),
    ("chunk", "props.index", True, "props.index must be an integer"),
    ("chunk", "props.text", ["a"], "props.text must be a string"),
    ("chunk_version", "props.document_id", DROP, "props.document_id must be a string"),
    ("chunk_version", "props.from_revision", "1", "props.from_revision must be an integer"),
    ("chunk_version", "props.span", {"a": 1}, "props.span must be a property value"),
    ("document_revision", "props.revision", DROP, "props.revision must be an integer"),
    ("document_revision", "props.document_id", DROP, "props.document_id must be a string"),
    ("entity", "props.id", DROP, "props.id must be a string"),
    ("entity", "props.type", 3, "props.type must be a string"),
    ("entity", "mentions", DROP, "mentions must be a list"),
    ("entity", "mentions", {"c1": {}}, "mentions must be a list"),
    ("entity", "mentions[0]", "c1", "mentions[0] must be an object"),
    ("entity", "mentions[0].chunk_id", DROP, "mentions[0].chunk_id must be a string"),
    ("entity", "mentions[0].props", DROP, "mentions[0].props must be an object"),
    ("entity", "mentions[0].props.ids", [1, "a"], "mentions[0].props.ids must be a property"),
    ("entity", "version_mentions", "d", "version_mentions must be a list"),
    ("entity", "version_mentions[0].from_revision", True, "version_mentions[0].from_revision"),
    ("entity", "version_mentions[0].props.at", {}, "version_mentions[0].props.at must be a"),
    ("merged_entity", "props.merged_into", DROP, "props.merged_into must be a string"),
    ("entity_merge", "props.created_at", "2026-12-02", "props.created_at must be a datetime"),
    ("entity_merge", "props.merged_ids", [], "props.merged_ids must be a list of strings"),
    ("fact", "subject_id", DROP, "subject_id must be a string"),
    ("fact", "object_id", None, "object_id must be a string"),
    ("fact", "sources", DROP, "sources must be a list"),
    ("fact", "sources[0].key", DROP, "sources[0].key must be a string"),
    ("fact", "sources[0].span", {"start": 0}, "sources[0].span must be a property value"),
    ("fact", "props.text", DROP, "props.text must be a string"),
    ("fact", "props.id", DROP, "props.id must be a string"),
    ("fact_pair", "props.older_id", DROP, "props.older_id must be a string"),
    ("fact_pair", "props.created_at", "2026-12-02", "props.created_at must be a datetime"),
    ("span", "props.id", DROP, "props.id must be a string"),
    ("tenant_fact", "subject", DROP, "subject must be an object"),
    ("tenant_fact", "object.type", DROP, "object.type must be a string"),
    ("tenant_fact", "subject.normalized_name", DROP, "subject.normalized_name must be"),
    ("tenant_fact", "subject.aliases", [None], "subject.aliases must be a property value"),
    ("tenant_fact", "written", DROP, "written must be a boolean"),
    ("tenant_fact", "written", "yes", "written must be a boolean"),
    ("tenant_fact", "props.natural_key", DROP, "props.natural_key must be a string"),
    ("tenant_fact", "props.text", DROP, "props.text must be a string"),
    ("tenant_fact", "sources[0].key", DROP, "sources[0].key must be a string"),
    ("sql_schema", "sql", DROP, "sql must be a string"),
    ("sql_schema", "type", 1, "type must be a string"),
    ("sql_schema", "name", DROP, "name must be a string"),
    ("sql_row", "table", DROP, "table must be a string"),
    ("sql_row", "columns", [], "columns must be a list of strings"),
    ("sql_row", "columns", ["id", 2, "raw"], "columns must be a list of strings"),
    ("sql_row", "values", DROP, "values must be a list"),
    ("sql_row", "values", [1], "values must be one value per column"),
    ("sql_row", "values[1]", {"a": 1}, "values[1] must be null, a boolean"),
    ("sql_row", "values[0]", 2**63, "values[0] must be null, a boolean"),
    ("sql_row", "values[2]", {"$base64": "!!"}, "values[2] must be null, a boolean"),
]


@pytest.mark.parametrize(("kind", "path", "value", "names"), BROKEN)
def test_a_malformed_record_is_refused_naming_its_line_and_field(
    kind: str, path: str, value: Any, names: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        check_record(7, record(kind, path, value))
    message = str(refused.value)
    assert message.startswith(f"line 7: {kind} {names}"), message
    assert SECRET not in message  # the refusal names fields, never contents


@pytest.mark.parametrize("name", ["", "a\x00b"])
def test_a_property_name_neo4j_refuses_is_refused(name: str) -> None:
    bad = record("chunk")
    bad["props"][name] = 1
    with pytest.raises(InvalidArgument, match=r"^line 7: chunk props names must be non-empty"):
        check_record(7, bad)
