"""Small helpers every plane's resolvers share: ids, writer stamps, provenance from rows."""

from __future__ import annotations

import re
import uuid
from typing import Any

from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope
from palimpsest.identity.scopes import scope_key, sees_writer
from palimpsest.schema.models import Provenance

_ID = re.compile(r"^[0-9a-f]{32}$")


def new_id() -> str:
    return uuid.uuid4().hex


def check_id(value: str, what: str) -> str:
    """Ids are 32 lowercase hex characters; anything else is a malformed argument."""
    if not _ID.match(value):
        raise InvalidArgument(f"{what} must be 32 lowercase hex characters")
    return value


def writer_params(who: Principal) -> dict[str, Any]:
    """The provenance a write stamps, all from the token; ``origin`` is never from the wire.

    ``writer_id`` is the writing user (``""`` for a token that names none, so a row written
    before authorship was stamped, with no ``writer_id`` at all, can be told apart) and
    ``writer_key`` their USER scope key, by which erasure finds what they wrote anywhere."""
    return {
        "session_id": who.session_id,
        "run_id": who.run_id,
        "agent_name": who.agent_name,
        "model": who.model,
        "origin": who.origin.value,
        "writer_id": who.user_id or "",
        "writer_key": writer_key(who),
    }


def writer_key(who: Principal) -> str | None:
    """The writer's USER scope key, stamped on a fact with no source: it belongs to them."""
    return scope_key(who.tenant_id, Scope.USER, who.user_id) if who.user_id else None


def fact_stamp(who: Principal, stamp: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a fact write stamps: the writer's provenance (or ``stamp``, a harvested run's, when
    the consolidator writes for the user) and the writer key erasure finds unsourced facts by."""
    return {**(stamp or writer_params(who)), **_author(who)}


def _author(who: Principal) -> dict[str, Any]:
    return {"writer_id": who.user_id or "", "writer_key": writer_key(who)}


def provenance_from(row: dict[str, Any], reader: Principal) -> Provenance:
    """A row's writer stamps as ``reader`` may see them: who wrote it (tenant, session, run,
    agent, model) is left empty unless ``sees_writer``, so every door gets the same redacted
    record. A fact's source quote is added from its sources (facts.py)."""
    shown = sees_writer(reader, row["tenant_id"])
    return Provenance(
        tenant_id=row["tenant_id"] if shown else "",
        session_id=row.get("session_id") if shown else None,
        run_id=row.get("run_id") if shown else None,
        agent_name=row.get("agent_name") if shown else None,
        model=row.get("model") if shown else None,
        writer=row.get("writer_id") or None if shown else None,
        origin=row.get("origin") or "agent",
        compaction_generation=row.get("compaction_generation"),
        judged_by=row.get("judged_by"),
        judged_at=row.get("judged_at"),
    )
