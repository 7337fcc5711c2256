"""The one place the server acts for a user: the consolidator's identity.

Every other principal is a verified run token. A consolidator worker has no token of the user
it works for: it finds queued spans, and turns them into memory in their owner's USER scope.
``act_for_user`` builds that principal from what the harvested span recorded (tenant, user,
and the harvesting run's identity and grants), with the ``consolidator`` role only, so:

- it reaches nothing the harvesting run could not reach (its grants are copied, never widened;
  admin is never carried over, so GLOBAL is out of reach);
- without a run (leasing, before any span is read) it reaches the user's USER scope only;
- scopes still come from ``resolve_scope``, like for any caller.
"""

from __future__ import annotations

from dataclasses import dataclass

from palimpsest.identity.principal import Principal, Role, Scope


@dataclass(frozen=True, slots=True)
class HarvestedRun:
    """The run that banked a span, as the span recorded it."""

    session_id: str | None
    run_id: str | None
    agent_name: str | None
    model: str | None
    memory_scopes: frozenset[Scope] | None
    sql_scopes: frozenset[Scope] | None
    isolated: bool


def act_for_user(tenant_id: str, user_id: str, run: HarvestedRun | None = None) -> Principal:
    """The consolidator acting for ``user_id``: the harvesting run's reach, or USER alone."""
    if run is None:
        return Principal(
            tenant_id=tenant_id,
            user_id=user_id,
            agent_name=None,
            session_id=None,
            run_id=None,
            model=None,
            roles=frozenset({Role.CONSOLIDATOR}),
            memory_scopes=frozenset({Scope.USER}),
            sql_scopes=frozenset(),
            isolated=True,
        )
    return Principal(
        tenant_id=tenant_id,
        user_id=user_id,
        agent_name=run.agent_name,
        session_id=run.session_id,
        run_id=run.run_id,
        model=run.model,
        roles=frozenset({Role.CONSOLIDATOR}),
        memory_scopes=run.memory_scopes,
        sql_scopes=run.sql_scopes,
        isolated=run.isolated,
    )
