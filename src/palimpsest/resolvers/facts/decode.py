"""Facts as rows decode them, and as the server believed them at a past transaction time."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from palimpsest.cypher.driver.executor import Row
from palimpsest.identity import Principal, Scope
from palimpsest.resolvers.common import provenance_from
from palimpsest.resolvers.facts.closure import OPEN_END
from palimpsest.schema.models import Entity, Fact, FactSource, SourceQuote


def fact_from(scope: Scope, row: Row, reader: Principal) -> Fact:
    f, s, o = row["fact"], row["subject"], row["object"]
    sources = tuple(_source(x) for x in row.get("sources") or ())
    # The single quote of the API is the earliest source still standing.
    first = sources[0] if sources else None
    quote = SourceQuote(first.chunk_id, first.start, first.end, first.text) if first else None
    return Fact(
        scope=scope,
        id=f["id"],
        subject=entity_from(s, reader),
        predicate=f["predicate"],
        object=entity_from(o, reader),
        text=f["text"],
        natural_key=f["natural_key"],
        observed_at=f["observed_at"],
        valid_at=f["valid_at"],
        invalid_at=f["invalid_at"],
        created_at=f["created_at"],
        expired_at=f["expired_at"],
        supersedes=f["supersedes"],
        superseded_by=f["superseded_by"],
        confidence=f["confidence"],
        verdict=f["verdict"],
        judge_reason=f["judge_reason"],
        provenance=replace(provenance_from(f, reader), source_quote=quote),
        sources=sources,
    )


def as_known(fact: Fact, row: Row, known_at: datetime | None) -> Fact:
    """The fact as the server believed it at ``known_at``: the end it had then (its versions
    of ``invalid_at``), and not yet retired when it was retired later."""
    if known_at is None:
        return fact
    f = row["fact"]
    changes: list[datetime] = list(f.get("ends_changed_at") or ())
    ends: list[datetime] = list(f.get("prior_ends") or ())
    end = fact.invalid_at
    later = [i for i, at in enumerate(changes) if at > known_at]
    if later:
        end = ends[later[0]]
        end = None if end == OPEN_END else end
    elif not changes and f.get("invalid_changed_at") and f["invalid_changed_at"] > known_at:
        end = f.get("prior_invalid_at")  # a fact changed before versions were kept
    expired = fact.expired_at if fact.expired_at and fact.expired_at <= known_at else None
    retired_by = fact.superseded_by if expired else None
    return replace(fact, invalid_at=end, expired_at=expired, superseded_by=retired_by)


def _source(x: Row) -> FactSource:
    return FactSource(
        chunk_id=x["chunk_id"],
        document_id=x.get("document_id"),
        start=int(x["start"]),
        end=int(x["end"]),
        text=x.get("text"),
        origin_scope=x.get("origin_scope"),
        added_at=x["created_at"],
        origin=x.get("origin"),
    )


def entity_from(row: Row, reader: Principal) -> Entity:
    """An entity from a projection with ``id``, ``type``, ``name``, ``aliases`` and the
    provenance keys (flat, or under ``provenance``)."""
    stamp = row.get("provenance") or row
    provenance = provenance_from(stamp, reader) if stamp.get("tenant_id") else None
    return Entity(row["id"], row["type"], row["name"], tuple(row.get("aliases") or ()), provenance)
