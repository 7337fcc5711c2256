"""The placement decision (docs/spec.md, Placement): which scope one fact is written in.

Pure: the caller loads the ontology, the user's own names and each subject's recorded types,
and asks once per batch before writing anything (reference 5.4). Every branch that does not
move the fact returns the requested scope with a stable reason code. The checks run in the
order of reference 5.3 (``ResolvePlacement``), after the per-call ontology checks of 5.2:

 -. the caller has no TENANT on the memory plane -> ISOLATED (an isolated member) or
    NO_TENANT_ACCESS, before anything else: the ontology lives in the tenant scope, so such a
    caller learns nothing of it (no type, alias, declared scope, draft state or existence) and
    none of its facts move, not even between its own scopes (a move would tell the mapping).
 0. no ontology -> NO_ONTOLOGY; draft ontology -> DRAFT_ONTOLOGY
 1. no type -> TYPE_MISSING                  2. no subject -> SUBJECT_MISSING
 3. type not in force -> TYPE_UNDECLARED     4. type declares no scope -> NO_SCOPE_DECLARED
 5. subject is the caller's own user (skipped when the target is USER) -> SUBJECT_IS_SELF
 6. subject recorded under a type pointing elsewhere -> CONFLICTING_TYPES (+ advisory)
 7. target not in memory_scopes -> SCOPE_NOT_GRANTED
 8. target TENANT and not in sql_scopes -> SCOPE_NOT_GRANTED (both halves need it)
 9. target TENANT and the caller is isolated -> ISOLATED
10. target needs an owner id the token lacks -> OWNER_MISSING (not in the reference: its
    grant lists never hold AGENT without an agent; ours can)
11. target is the requested scope -> SAME_SCOPE;  12. else -> PLACED (moved)

An isolated member with full grants hears ISOLATED, as in reference 10.60, rather than a
misleading "not granted"; unlike the reference, its facts also stay between its own scopes.
Step 9 stays as a guard for callers the first check lets through.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from palimpsest.domain.names import normalise
from palimpsest.errors import InvalidArgument
from palimpsest.identity.permissions import isolated
from palimpsest.identity.principal import Principal, Scope
from palimpsest.identity.scopes import Plane, granted_scopes, resolve_scope
from palimpsest.ontology import EntityType, Ontology

MAX_BATCH = 200
# Words by which a writer means the profile owner; compared after normalise() and "the "-strip.
SELF_WORDS = frozenset(
    {"i", "me", "my", "mine", "myself", "self", "user", "current user", "operator"}
)


class PlacementReason(StrEnum):
    NO_ONTOLOGY = "NO_ONTOLOGY"
    DRAFT_ONTOLOGY = "DRAFT_ONTOLOGY"
    TYPE_MISSING = "TYPE_MISSING"
    SUBJECT_MISSING = "SUBJECT_MISSING"
    TYPE_UNDECLARED = "TYPE_UNDECLARED"
    NO_SCOPE_DECLARED = "NO_SCOPE_DECLARED"
    SUBJECT_IS_SELF = "SUBJECT_IS_SELF"
    CONFLICTING_TYPES = "CONFLICTING_TYPES"
    SCOPE_NOT_GRANTED = "SCOPE_NOT_GRANTED"
    ISOLATED = "ISOLATED"
    NO_TENANT_ACCESS = "NO_TENANT_ACCESS"
    OWNER_MISSING = "OWNER_MISSING"
    SAME_SCOPE = "SAME_SCOPE"
    PLACED = "PLACED"


@dataclass(frozen=True, slots=True)
class PlacementItem:
    entity_type: str | None = None
    subject: str | None = None
    # Types this subject is already recorded under in the graph (looked up by the caller).
    recorded_types: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Placement:
    scope: Scope
    moved: bool
    reason: PlacementReason
    message: str
    advisory: str | None = None
    # The canonical name of the item's type when it is in force (an alias resolves to it).
    entity_type: str | None = None
    # The predicates that type declares single-valued (filled by the dry run).
    single_valued: tuple[str, ...] = ()


def place(
    ontology: Ontology | None,
    principal: Principal,
    requested: Scope,
    item: PlacementItem,
    *,
    self_names: Iterable[str] = (),
) -> Placement:
    """Decide where one fact goes. ``self_names`` are the user's own names and aliases (from
    their profile); the ontology's ``## self`` words and the token's user id always count.

    Raises ``Forbidden`` when ``requested`` itself is not the caller's to write.
    """
    resolve_scope(principal, requested)
    return _decide(ontology, principal, requested, item, _selves(ontology, principal, self_names))


def place_batch(
    ontology: Ontology | None,
    principal: Principal,
    requested: Scope,
    items: Sequence[PlacementItem],
    *,
    self_names: Iterable[str] = (),
) -> list[Placement]:
    """One decision per item, in order; 1 to ``MAX_BATCH`` items."""
    if not items:
        raise InvalidArgument(f"items is required: give 1 to {MAX_BATCH} items")
    if len(items) > MAX_BATCH:
        raise InvalidArgument(
            f"{len(items)} items, over the {MAX_BATCH} limit — split the batch",
            count=len(items),
            limit=MAX_BATCH,
        )
    resolve_scope(principal, requested)
    selves = _selves(ontology, principal, self_names)
    return [_decide(ontology, principal, requested, item, selves) for item in items]


def _decide(
    ontology: Ontology | None,
    principal: Principal,
    requested: Scope,
    item: PlacementItem,
    selves: frozenset[str],
) -> Placement:
    here = requested.value
    etype: EntityType | None = None  # set once the type is known to be in force

    def stay(reason: PlacementReason, message: str, advisory: str | None = None) -> Placement:
        name = etype.name if etype is not None else None
        return Placement(requested, False, reason, f"{message}; it stays in {here}", advisory, name)

    if Scope.TENANT not in granted_scopes(principal, Plane.MEMORY):
        # The same answer for every item, whatever the ontology holds: no detail of it leaks.
        if isolated(principal):
            return stay(
                PlacementReason.ISOLATED,
                "the caller is isolated from the tenant, so the tenant ontology does not apply",
            )
        return stay(
            PlacementReason.NO_TENANT_ACCESS,
            "placement follows the tenant ontology, which needs TENANT in this token's "
            "memory_scopes",
        )
    if ontology is None:
        return stay(PlacementReason.NO_ONTOLOGY, "the tenant has no ontology, so nothing moves")
    if not ontology.confirmed:
        return stay(
            PlacementReason.DRAFT_ONTOLOGY,
            "the tenant ontology is a draft (only `status: confirmed` moves facts)",
        )
    type_text = normalise(item.entity_type or "")
    if not type_text:
        return stay(PlacementReason.TYPE_MISSING, "the item names no entity type")
    subject = (item.subject or "").strip()
    if not subject:
        return stay(PlacementReason.SUBJECT_MISSING, f"type {type_text!r} is given but no subject")
    etype = ontology.find(type_text)
    if etype is None:
        return stay(PlacementReason.TYPE_UNDECLARED, f"no type named {type_text!r} is in force")
    target = etype.scope
    declares = f"type {etype.name!r} declares {target.value if target else 'no scope'}"
    if target is None:
        return stay(PlacementReason.NO_SCOPE_DECLARED, declares)
    if target is not Scope.USER and _self_key(subject) in selves:
        return stay(
            PlacementReason.SUBJECT_IS_SELF,
            f"{declares}, but subject {subject!r} is the calling user",
        )
    conflicts = _conflicts(ontology, etype, item.recorded_types)
    if conflicts:
        others = " and ".join(f"{o.name!r} ({o.scope.value if o.scope else ''})" for o in conflicts)
        advisory = (
            f"subject {subject!r} is recorded as {etype.name!r} ({target.value}) and as "
            f"{others}; give it ONE type so its facts have one home"
        )
        return stay(
            PlacementReason.CONFLICTING_TYPES,
            f"{declares}, but subject {subject!r} is also recorded under a type pointing to "
            "another scope",
            advisory,
        )
    # Grants as declared, before the isolation rule: step 9 names isolation itself.
    declared = replace(principal, isolated=False)
    for plane in (Plane.MEMORY, Plane.SQL) if target is Scope.TENANT else (Plane.MEMORY,):
        granted = granted_scopes(declared, plane)
        if target not in granted:
            listed = ", ".join(sorted(s.value for s in granted)) or "none"
            return stay(
                PlacementReason.SCOPE_NOT_GRANTED,
                f"{declares}, but {target.value} is not granted in this token's "
                f"{plane.value}_scopes (granted: {listed})",
            )
    if target is Scope.TENANT and isolated(principal):
        return stay(
            PlacementReason.ISOLATED, f"{declares}, but the caller is isolated from the tenant"
        )
    if (target is Scope.AGENT and not principal.agent_name) or (
        target is Scope.USER and not principal.user_id
    ):
        owner = "an agent name" if target is Scope.AGENT else "a user id"
        return stay(PlacementReason.OWNER_MISSING, f"{declares}, but the token has no {owner}")
    moved = target is not requested
    return Placement(
        target,
        moved,
        PlacementReason.PLACED if moved else PlacementReason.SAME_SCOPE,
        f"{declares}; moved from {here}" if moved else f"{declares}; already going there",
        entity_type=etype.name,
    )


def _conflicts(ontology: Ontology, etype: EntityType, recorded: Iterable[str]) -> list[EntityType]:
    """Other recorded types in force whose scope differs; unknown or scope-less types agree."""
    found: dict[str, EntityType] = {}
    for name in recorded:
        other = ontology.find(name)
        if other is not None and other.scope is not None and other.scope is not etype.scope:
            found[other.name] = other
    return [found[name] for name in sorted(found)]


def _self_key(text: str) -> str:
    return normalise(text).removeprefix("the ")


def _selves(
    ontology: Ontology | None, principal: Principal, extra: Iterable[str]
) -> frozenset[str]:
    names = set(SELF_WORDS)
    names.update(_self_key(n) for n in extra)
    if ontology is not None:
        names.update(_self_key(n) for n in ontology.self_names)
    if principal.user_id:
        names.add(_self_key(principal.user_id))
    names.discard("")
    return frozenset(names)
