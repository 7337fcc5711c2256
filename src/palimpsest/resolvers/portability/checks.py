"""What each record of an export must hold before ``palimpsest import`` writes anything.

The import's first pass checks every record against ``RECORDS``: the fields the loader
(``importer._Loader``) and the ``IMPORT_*`` statements (``cypher/export.py``) read, with their
types, and every map the statements set whole on a node or relationship (``props``, mention
props, sources, a tenant fact's entities) holds only values Neo4j stores as properties. A
record that would fail halfway through the second pass is refused with the rest of the file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from palimpsest.errors import InvalidArgument
from palimpsest.sqlmem.core import codec

Record = dict[str, Any]
_INT64 = (-(2**63), 2**63 - 1)


@dataclass(frozen=True)
class Want:
    """A value ``test`` accepts; ``says`` names it in the refusal."""

    says: str
    test: Callable[[Any], bool]


@dataclass(frozen=True)
class Map:
    """A JSON object holding at least these ``fields``. ``stored``: set whole on a node or
    relationship, so every value it holds must be a property value."""

    fields: Mapping[str, Field]
    stored: bool = True


@dataclass(frozen=True)
class Each:
    """A list (maybe empty) whose items are ``item``."""

    item: Map


@dataclass(frozen=True)
class Maybe:
    """Missing or null is fine; otherwise ``inner``."""

    inner: Want | Map | Each


Field = Want | Map | Each | Maybe


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and _INT64[0] <= v <= _INT64[1]


STR = Want("a string", lambda v: isinstance(v, str) and bool(v))
TEXT = Want("a string", lambda v: isinstance(v, str))
INT = Want("an integer", _int)
BOOL = Want("a boolean", lambda v: isinstance(v, bool))
TIME = Want("a datetime", lambda v: isinstance(v, datetime))
STRS = Want(
    "a list of strings",
    lambda v: isinstance(v, list) and bool(v) and all(isinstance(x, str) for x in v),
)
STR_OR_NULL = Want("a string or null", lambda v: v is None or (isinstance(v, str) and bool(v)))
LIST = Want("a list", lambda v: isinstance(v, list))
# The kinds whose rows feed the scope's term statistics (``term_index.added``), which reads
# these when ``ft_len`` is set.
TERMS = frozenset({"memory", "chunk", "fact", "tenant_fact"})
_TERM_FIELDS: dict[str, Field] = {
    "ft_len": Maybe(INT),
    "ft": Maybe(TEXT),
    "ft_tf": Maybe(Want("a list of integers", lambda v: isinstance(v, list) and all(map(_int, v)))),
    "speaker": Maybe(STR),
}
_SOURCES = Each(Map({"key": STR}))
_ENTITY = Map({"id": STR, "type": STR, "normalized_name": STR})


def _record(fields: Mapping[str, Field], props: Mapping[str, Field] | None = None) -> Map:
    """A record: ``props`` (a property map with these fields) beside the other ``fields``."""
    if props is not None:
        fields = {"props": Map(props), **fields}
    return Map(fields, stored=False)


RECORDS: dict[str, Map] = {
    "memory": _record(
        {}, {"key": STR, "text": Maybe(TEXT), "embed_mode": Maybe(STR), **_TERM_FIELDS}
    ),
    "memory_version": _record({}, {"id": STR, "key": STR, "text": Maybe(TEXT)}),
    "document": _record({}, {"id": STR}),
    "chunk": _record(
        {"parent_id": STR_OR_NULL, "next_id": STR_OR_NULL},
        {
            "id": STR,
            "document_id": STR,
            "index": Maybe(INT),
            "position": Maybe(INT),
            "text": Maybe(TEXT),
            **_TERM_FIELDS,
        },
    ),
    "chunk_version": _record(
        {}, {"id": STR, "document_id": STR, "from_revision": Maybe(INT), "text": Maybe(TEXT)}
    ),
    "document_revision": _record({}, {"document_id": STR, "revision": INT}),
    "entity": _record(
        {
            "mentions": Each(Map({"chunk_id": STR, "props": Map({})}, stored=False)),
            # Minor 4; older files have none.
            "version_mentions": Maybe(
                Each(
                    Map(
                        {
                            "document_id": STR,
                            "chunk_id": STR,
                            "from_revision": INT,
                            "props": Map({}),
                        },
                        stored=False,
                    )
                )
            ),
        },
        {"id": STR, "type": Maybe(STR), "name": Maybe(STR), "normalized_name": Maybe(STR)},
    ),
    # What unmerge reads.
    "merged_entity": _record(
        {},
        {
            "id": STR,
            "type": STR,
            "name": STR,
            "normalized_name": STR,
            "merged_into": STR,
            "merge_id": STR,
        },
    ),
    "entity_merge": _record(
        {}, {"id": STR, "keep_id": STR, "merged_ids": STRS, "created_at": TIME}
    ),
    "fact": _record(
        {"subject_id": STR, "object_id": STR, "sources": _SOURCES},
        {"id": STR, "text": TEXT, "natural_key": Maybe(STR), **_TERM_FIELDS},
    ),
    # Minor 5: a pair of close facts and its verdict; both facts come before it in the file.
    "fact_pair": _record({}, {"id": STR, "older_id": STR, "newer_id": STR, "created_at": TIME}),
    "span": _record({}, {"id": STR}),
    # Matched by natural key in the shared scope, its entities by type and normalised name.
    "tenant_fact": _record(
        {"subject": _ENTITY, "object": _ENTITY, "written": BOOL, "sources": _SOURCES},
        {"id": STR, "natural_key": STR, "text": TEXT, **_TERM_FIELDS},
    ),
    "sql_schema": _record({"type": STR, "name": STR, "sql": STR}),
    "sql_row": _record({"table": STR, "columns": STRS, "values": LIST}),
}

PROPERTY = "a property value (a scalar, a datetime, or a list of one scalar type without nulls)"


_MISSING = object()  # a field the record lacks: only ``Maybe`` accepts it


class _Refused(Exception):
    def __init__(self, path: str, says: str) -> None:
        self.path = path
        self.says = says


def check_record(number: int, record: Record) -> None:
    """Refuse the record (``InvalidArgument`` naming the line and field) unless it holds
    what its kind's ``RECORDS`` entry asks and what the loader reads across fields."""
    kind = record["kind"]
    try:
        _check("", record, RECORDS[kind])
        if kind in TERMS and record["props"].get("ft_len") is not None:
            _check_terms(record["props"])
        if kind == "sql_row":
            _check_sql_row(record)
    except _Refused as e:
        raise InvalidArgument(f"line {number}: {kind} {e.path} must be {e.says}") from None


def _check(path: str, value: Any, field: Field) -> None:
    if isinstance(field, Maybe):
        if value is not None and value is not _MISSING:
            _check(path, value, field.inner)
    elif isinstance(field, Want):
        if not field.test(value):
            raise _Refused(path, field.says)
    elif isinstance(field, Each):
        if not isinstance(value, list):
            raise _Refused(path, "a list")
        for i, item in enumerate(value):
            _check(f"{path}[{i}]", item, field.item)
    else:
        _check_map(path, value, field)


def _check_map(path: str, value: Any, shape: Map) -> None:
    if not isinstance(value, dict):
        raise _Refused(path or "record", "an object")
    prefix = f"{path}." if path else ""
    for name, field in shape.fields.items():
        _check(prefix + name, value.get(name, _MISSING), field)
    if shape.stored:
        for name, v in value.items():
            if not name or "\x00" in name:
                raise _Refused(f"{path} names", "non-empty strings without NUL")
            if not _storable(v):
                raise _Refused(prefix + name, PROPERTY)


def _scalar(v: Any) -> str | None:
    """The property type of a list item; None when Neo4j cannot store it in a list."""
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int" if _int(v) else None
    if isinstance(v, datetime):
        return "local" if v.tzinfo is None else "zoned"
    if isinstance(v, float | str):
        return type(v).__name__
    return None


def _storable(v: Any) -> bool:
    """Null (the property is left unset), a scalar, a datetime, or a list of one of them
    (int and float count as two types: the export never mixes them)."""
    if v is None:
        return True
    if isinstance(v, list):
        types = {_scalar(x) for x in v}
        return None not in types and len(types) <= 1
    return _scalar(v) is not None


def _check_terms(props: Record) -> None:
    """A row counted in the term statistics: its terms and their frequencies pair up."""
    ft, tf = props.get("ft"), props.get("ft_tf")
    if not isinstance(ft, str) or not isinstance(tf, list):
        raise _Refused("props.ft and props.ft_tf", "set when props.ft_len is")
    if ft and len(ft.split(" ")) != len(tf):
        raise _Refused("props.ft_tf", "one frequency per term of props.ft")


def _check_sql_row(record: Record) -> None:
    """One value per column, each one the SQL store binds (``codec.bind``)."""
    values = record["values"]
    if len(values) != len(record["columns"]):
        raise _Refused("values", "one value per column")
    if len(values) > codec.MAX_ARGS:
        raise _Refused("values", f"at most {codec.MAX_ARGS} values")
    for i, v in enumerate(values):
        try:
            codec.bind([v])
        except InvalidArgument:
            raise _Refused(
                f"values[{i}]", "null, a boolean, a number, a string or a blob"
            ) from None
