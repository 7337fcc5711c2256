"""Facts as callers state them: validation, normalisation and natural keys (no I/O)."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from palimpsest.domain.names import fold, normalise
from palimpsest.domain.time.timeparse import check_interval
from palimpsest.errors import InvalidArgument
from palimpsest.resolvers.common import check_id, new_id
from palimpsest.schema.drafts import EntityRef, FactDraft
from palimpsest.schema.fact_rows import FactRow

VALUE_TYPE = "value"  # the entity type of a literal object
MAX_BATCH = 200
MAX_TEXT = 4000
MAX_NAME = 300


TYPE_LABEL = re.compile(r"^Type_[A-Za-z0-9]{1,64}$")


def type_label(entity_type: str) -> str:
    """The second label an entity gets for its type, so Neo4j Browser colours types apart.

    Cypher cannot take a label as an ordinary parameter; the statement sets it with Cypher 25's
    dynamic label ``SET e:$(item.subject_label)``, so the value is still data, never query
    text. On top of that the label is built from an allow-list pattern (``Type_`` plus ASCII
    letters and digits, CamelCased): no type name can become a structural label such as
    ``Memory`` or ``Chunk`` and widen what a scoped statement matches. Types with no ASCII
    letter or digit share ``Type_Other``.
    """
    words = re.findall(r"[A-Za-z0-9]+", entity_type)
    camel = "".join(w[:1].upper() + w[1:] for w in words)[:64] or "Other"
    label = f"Type_{camel}"
    if not TYPE_LABEL.match(label):  # unreachable by construction; never let it through
        raise InvalidArgument("entity type does not make a valid label")
    return label


def prepare(drafts: Sequence[FactDraft]) -> list[FactRow]:
    """Validate a batch and turn it into statement rows (ids, keys, parsed times)."""
    if not drafts:
        raise InvalidArgument("facts must not be empty")
    if len(drafts) > MAX_BATCH:
        raise InvalidArgument(f"{len(drafts)} facts, over the {MAX_BATCH} limit: split the batch")
    return [_prepare_one(i, d) for i, d in enumerate(drafts)]


def _prepare_one(index: int, d: FactDraft) -> FactRow:
    where = f"facts[{index}]"
    if (d.object is None) == (d.object_value is None):
        raise InvalidArgument(f"{where}: give exactly one of object and objectValue")
    obj = d.object or EntityRef(VALUE_TYPE, d.object_value or "")
    for label, ref in (("subject", d.subject), ("object", obj)):
        if not normalise(ref.name) or not normalise(ref.type):
            raise InvalidArgument(f"{where}.{label}: type and name must not be blank")
        if len(ref.name) > MAX_NAME or len(ref.type) > MAX_NAME:
            raise InvalidArgument(f"{where}.{label}: type and name are limited to {MAX_NAME}")
    predicate = " ".join(d.predicate.split())
    if not predicate or len(predicate) > MAX_NAME:
        raise InvalidArgument(f"{where}.predicate must be 1-{MAX_NAME} characters")
    text = d.text if d.text is not None else f"{d.subject.name} {predicate} {obj.name}"
    if not text.strip() or len(text) > MAX_TEXT:
        raise InvalidArgument(f"{where}.text must be 1-{MAX_TEXT} characters")
    valid_at, invalid_at = d.valid_at, d.invalid_at
    try:
        check_interval(valid_at, invalid_at)
    except InvalidArgument as e:
        raise InvalidArgument(f"{where}: {e.message}") from e
    subject_type, object_type = normalise(d.subject.type), normalise(obj.type)
    key = d.natural_key or _natural_key(
        subject_type,
        normalise(d.subject.name),
        predicate,
        object_type,
        normalise(obj.name),
        valid_at,
    )
    if not 0 < len(key) <= MAX_NAME:
        raise InvalidArgument(f"{where}.naturalKey must be 1-{MAX_NAME} characters")
    source = d.source
    if source is not None:
        check_id(source.chunk_id, f"{where}.source.chunkId")
        if not 0 <= source.start < source.end:
            raise InvalidArgument(f"{where}.source: need 0 <= start < end")
    if d.quote is not None:
        if source is None:
            raise InvalidArgument(f"{where}.quote narrows a source: give source too")
        if not d.quote.strip() or len(d.quote) > MAX_TEXT:
            raise InvalidArgument(f"{where}.quote must be 1-{MAX_TEXT} characters")
    return FactRow(
        index=index,
        id=new_id(),
        natural_key=key,
        key_given=d.natural_key is not None,
        subject_type=subject_type,
        subject_name=" ".join(d.subject.name.split()),
        subject_norm=normalise(d.subject.name),
        subject_key=fold(d.subject.name) or None,
        subject_id=new_id(),
        subject_label=type_label(subject_type),
        object_type=object_type,
        object_name=" ".join(obj.name.split()),
        object_norm=normalise(obj.name),
        object_key=None if d.object is None else fold(obj.name) or None,
        object_id=new_id(),
        object_label=type_label(object_type),
        object_is_value=d.object is None,
        predicate=predicate,
        predicate_key=normalise(predicate),
        text=text,
        observed_at=d.observed_at,
        valid_at=valid_at,
        invalid_at=invalid_at,
        source_chunk_id=source.chunk_id if source else None,
        source_start=source.start if source else None,
        source_end=source.end if source else None,
        quote=d.quote,
        share_quote=d.share_quote,
        judged_by=d.extracted_by,
    )


def _natural_key(*parts: object) -> str:
    raw = "\x1f".join("" if p is None else str(p) for p in parts)
    return "fact:" + hashlib.sha256(raw.encode()).hexdigest()[:32]
