"""The harvest bridge: bank the spans a runtime evicts from its context (docs/spec.md, Harvest
and consolidation).

Spans land on the consolidator's queue in the USER scope of the run's user, in one
transaction, so an accepted span is durable when ``harvest`` answers. Every check runs before
that transaction: a refused batch changes nothing. A span is keyed by ``(run, sourceId)``, or
``(session, sourceId)`` for a token without a ``run`` claim: sending it again (a retried
harvest) is a no-op counted as a duplicate, while another run's span with the same
``sourceId`` is another span. A token with neither claim cannot key a span: its ``sourceId``
is refused.

Each span records the harvesting run's identity and grants, so the consolidator can later act
for that run (``identity.acting``) with exactly the reach the run had, and never more.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from palimpsest.cypher import harvest as q
from palimpsest.cypher.driver.executor import Row, ScopedTx
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Origin, Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers.common import new_id, writer_params
from palimpsest.resolvers.facts.inputs import prepare
from palimpsest.resolvers.services import Services
from palimpsest.resolvers.tenant import quotas
from palimpsest.schema.drafts import EntityRef, FactDraft, SourceRef

MAX_PAYLOAD_BYTES = 1024 * 1024  # larger payloads are refused, not truncated
MAX_SPANS = 1000
MAX_LABEL = 256  # speaker, role and sourceId
MAX_GENERATION = 2**31 - 1


class Status:
    """A span's state on the queue (stored as text, passed as parameters)."""

    QUEUED = "queued"
    DONE = "done"
    DEAD = "dead"


STATUS_PARAMS = {"queued": Status.QUEUED, "done": Status.DONE, "dead": Status.DEAD}


@dataclass(frozen=True, slots=True)
class SpanDraft:
    """One evicted span as the runtime sends it."""

    text: str
    speaker: str | None = None
    role: str | None = None
    observed_at: datetime | None = None
    source_id: str | None = None
    facts: Sequence[FactDraft] = field(default_factory=tuple)


@dataclass(frozen=True, slots=True)
class HarvestReceipt:
    accepted: int
    duplicates: int
    span_ids: list[str]
    compaction_generation: int


async def harvest(
    svc: Services, who: Principal, spans: Sequence[SpanDraft], compaction_generation: int
) -> HarvestReceipt:
    # USER grant and a user id in the token, or FORBIDDEN before anything else is looked at.
    ref = resolve_scope(who, Scope.USER)
    if not spans:
        raise InvalidArgument("spans must not be empty")
    if len(spans) > MAX_SPANS:
        raise InvalidArgument(f"{len(spans)} spans, over the {MAX_SPANS} limit: split the batch")
    if not 0 <= compaction_generation <= MAX_GENERATION:
        raise InvalidArgument("compactionGeneration must be zero or more")
    items = [_item(ref, who, i, s) for i, s in enumerate(spans)]
    size = sum(item["bytes"] for item in items)
    if size > MAX_PAYLOAD_BYTES:
        raise InvalidArgument(
            f"the spans hold {size} bytes; the limit per call is {MAX_PAYLOAD_BYTES}: "
            "send fewer spans per call",
            limit=MAX_PAYLOAD_BYTES,
            size=size,
        )
    params = {
        **writer_params(who),
        # A banked span is evicted context, whoever banked it (docs/spec.md, Provenance).
        "origin": Origin.COMPACTION.value,
        **STATUS_PARAMS,
        "spans": items,
        "batch": uuid.uuid4().hex,
        "now": svc.clock(),
        "compaction_generation": compaction_generation,
        "grant_memory": _grant(who.memory_scopes),
        "grant_sql": _grant(who.sql_scopes),
        "isolated": who.isolated,
    }

    async def work(tx: ScopedTx) -> list[Row]:
        written = await tx.run(q.HARVEST_SPANS, params)
        new = sum(1 for r in written if r["created"])
        await quotas.admit(tx, svc.settings, {quotas.Plane.PENDING_SPANS: new})
        return written

    rows = await svc.db.scoped(ref).write_tx(work)
    rows.sort(key=lambda r: int(r["index"]))
    accepted = sum(1 for r in rows if r["created"])
    if accepted:
        svc.wake.notify()  # committed: a worker of this server may lease them now
    return HarvestReceipt(
        accepted=accepted,
        duplicates=len(rows) - accepted,
        span_ids=[r["id"] for r in rows],
        compaction_generation=compaction_generation,
    )


def span_id(ref: ScopeRef, who: Principal, source_id: str) -> str | None:
    """The span's id: stable for one ``(scope, run, sourceId)`` (or ``(scope, session,
    sourceId)`` without a run), so a re-send finds it; None when the token names neither."""
    if who.run_id:
        parts: tuple[str, ...] = (who.run_id,)
    elif who.session_id:
        # An empty run part first: no run id is empty, so this never meets a run's key.
        parts = ("", "session", who.session_id)
    else:
        return None
    raw = "\x1f".join(("span", ref.scope_key, *parts, source_id))
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def _item(ref: ScopeRef, who: Principal, index: int, span: SpanDraft) -> dict[str, Any]:
    where = f"spans[{index}]"
    if not span.text.strip():
        raise InvalidArgument(f"{where}.text must not be blank")
    labels = (("speaker", span.speaker), ("role", span.role), ("sourceId", span.source_id))
    for name, value in labels:
        if value is not None and not 0 < len(value) <= MAX_LABEL:
            raise InvalidArgument(f"{where}.{name} must be 1-{MAX_LABEL} characters")
    key = span_id(ref, who, span.source_id) if span.source_id else new_id()
    if key is None:
        raise InvalidArgument(
            f"{where}.sourceId needs a run or session claim in the token: without one, "
            "every run of this user would share one idempotency space; leave sourceId out "
            "or send a token with a run"
        )
    observed = span.observed_at
    facts = [_fact(where, j, f, span) for j, f in enumerate(span.facts)]
    if facts:
        try:
            # Checked as drafts without their quote: it narrows a source they do not have yet.
            prepare([fact_draft({**f, "quote": None}) for f in facts])
        except InvalidArgument as e:
            raise InvalidArgument(f"{where}.{e.message}", **e.details) from e
    encoded = orjson.dumps(facts).decode() if facts else None
    size = sum(len(v.encode()) for v in (span.text, span.speaker, span.role, span.source_id) if v)
    return {
        "index": index,
        "id": key,
        "source_id": span.source_id,
        "text": span.text,
        "speaker": span.speaker,
        "role": span.role,
        "observed_at": observed,
        "facts": encoded,
        "bytes": size + len(encoded.encode() if encoded else b""),
    }


def _fact(where: str, j: int, d: FactDraft, span: SpanDraft) -> dict[str, Any]:
    """A candidate fact as stored on the span; the consolidator quotes the span (or the
    fact's ``quote`` in it) as its source."""
    if d.source is not None:
        raise InvalidArgument(
            f"{where}.facts[{j}].source: a span's facts are quoted from the span itself; "
            "leave source out"
        )
    if d.quote is not None and (not d.quote.strip() or d.quote not in span.text):
        raise InvalidArgument(f"{where}.facts[{j}].quote must be a part of the span's text")
    observed_at = span.observed_at
    return {
        "subject": [d.subject.type, d.subject.name],
        "predicate": d.predicate,
        "object": [d.object.type, d.object.name] if d.object else None,
        "object_value": d.object_value,
        "text": d.text,
        "natural_key": d.natural_key,
        # A fact taken from a span was said when the span was, unless the runtime knows better.
        "observed_at": _iso(d.observed_at if d.observed_at is not None else observed_at),
        "valid_at": _iso(d.valid_at),
        "invalid_at": _iso(d.invalid_at),
        "quote": d.quote,
        "share_quote": d.share_quote,
    }


def fact_draft(stored: dict[str, Any], source: SourceRef | None = None) -> FactDraft:
    """A stored candidate fact back as a draft (``source``: the span's chunk, when known)."""
    obj = stored["object"]
    return FactDraft(
        subject=EntityRef(stored["subject"][0], stored["subject"][1]),
        predicate=stored["predicate"],
        object=EntityRef(obj[0], obj[1]) if obj else None,
        object_value=stored["object_value"],
        text=stored["text"],
        natural_key=stored["natural_key"],
        observed_at=_instant(stored["observed_at"]),
        valid_at=_instant(stored["valid_at"]),
        invalid_at=_instant(stored["invalid_at"]),
        source=source,
        # Spans banked before quotes existed carry neither key.
        quote=stored.get("quote"),
        share_quote=bool(stored.get("share_quote")),
    )


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def _instant(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _grant(scopes: frozenset[Scope] | None) -> list[str] | None:
    return None if scopes is None else sorted(s.value for s in scopes)
