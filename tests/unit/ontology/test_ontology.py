from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from palimpsest.errors import Forbidden, InvalidArgument
from palimpsest.identity import Plane, Principal, Role, Scope, granted_scopes, resolve_scope
from palimpsest.ontology import (
    Ontology,
    OntologyStatus,
    ontology_from_dict,
    parse_ontology,
)
from palimpsest.ontology.placement import (
    MAX_BATCH,
    Placement,
    PlacementItem,
    PlacementReason,
    place,
    place_batch,
)
from tests.unit.principals import principal

R = PlacementReason

DOC = """\
# Tenant ontology

status: confirmed

Prose about the ontology is ignored.

## Service
- `scope`: tenant
- aliases: microservice, API

## internal-service
extends: service

## person
scope: user

## location

## office
extends: location
scope: tenant

## notebook
scope: agent

## self
names: account holder
aliases: the customer
"""


def who(**overrides: Any) -> Principal:
    granted = frozenset({Scope.AGENT, Scope.USER, Scope.TENANT})
    return principal(**{"memory_scopes": granted, "sql_scopes": granted, **overrides})


def item(entity_type: str | None, subject: str | None, *recorded: str) -> PlacementItem:
    return PlacementItem(entity_type, subject, frozenset(recorded))


@pytest.fixture(scope="module")
def onto() -> Ontology:
    return parse_ontology(DOC)


def decide(
    onto: Ontology | None,
    it: PlacementItem,
    principal: Principal | None = None,
    requested: Scope = Scope.USER,
) -> Placement:
    return place(onto, principal or who(), requested, it)


# --- parser ---------------------------------------------------------------------------------


def test_parses_types_scopes_aliases_and_self_names(onto: Ontology) -> None:
    assert onto.confirmed
    assert set(onto.types) == {
        "service",
        "internal-service",
        "person",
        "location",
        "office",
        "notebook",
    }
    service = onto.types["service"]
    assert (service.scope, service.declared_scope, service.parent) == (Scope.TENANT,) * 2 + (None,)
    assert service.aliases == {"microservice", "api"}
    assert onto.types["location"].scope is None
    assert onto.types["notebook"].scope is Scope.AGENT
    assert onto.self_names == {"account holder", "the customer"}
    # Lookup folds case and whitespace, and resolves aliases to the canonical type.
    assert onto.find("  SERVICE ") is service
    assert onto.find("Api") is service
    assert onto.find("unknown") is None
    assert onto.find(None) is None


def test_subtypes_inherit_and_own_scope_overrides(onto: Ontology) -> None:
    sub = onto.types["internal-service"]
    assert (sub.parent, sub.declared_scope, sub.scope) == ("service", None, Scope.TENANT)
    office = onto.types["office"]
    assert (office.parent, office.scope) == ("location", Scope.TENANT)


def test_inheritance_is_transitive_and_scope_none_stops_it() -> None:
    o = parse_ontology(
        "status: confirmed\n## a\nscope: user\n## b\nextends: a\n## c\nextends: b\n"
        "## d\nextends: c\nscope: none\n## e\nextends: d\n"
    )
    assert [o.types[n].scope for n in "abcde"] == [Scope.USER] * 3 + [None, None]


def test_parent_may_be_declared_after_child_and_named_by_alias() -> None:
    o = parse_ontology(
        "status: confirmed\n## child\nextends: Svc\n## service\nscope: tenant\naliases: svc\n"
    )
    assert o.types["child"].parent == "service"
    assert o.types["child"].scope is Scope.TENANT


def test_missing_and_draft_status_are_drafts() -> None:
    assert parse_ontology("## service\nscope: tenant\n").status is OntologyStatus.DRAFT
    assert (
        parse_ontology("status: draft\n## service\nscope: tenant\n").status is OntologyStatus.DRAFT
    )
    assert parse_ontology("status: Confirmed (reviewed)\n").confirmed


def test_markdown_structure_is_respected() -> None:
    text = (
        "Tenant ontology\n===============\nstatus: confirmed\n\n"
        "service\n-------\nscope: tenant\n\n"
        "```\n## fake\nscope: bogus\n```\n\n"
        "> scope: bogus inside a quote is prose\n\n"
        "<!-- html is prose -->\n"
    )
    o = parse_ontology(text)
    assert set(o.types) == {"service"}
    assert o.types["service"].scope is Scope.TENANT


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("status: done\n", r"line 1: unknown status 'done'"),
        ("status: confirmed\nstatus: draft\n", r"line 2: 'status' is given twice"),
        ("\n## a\nscope: everywhere\n", r"line 3: unknown scope 'everywhere'"),
        ("## a\nscope: global\n", r"line 2: scope global cannot be declared"),
        ("## a\nscope: user\nscope: tenant\n", r"line 3: 'scope' is given twice"),
        ("## a\nscpoe: tenant\n", r"line 2: unknown directive 'scpoe' in type 'a'"),
        ("## a\nstatus: confirmed\n", r"line 2: .*document directive"),
        ("scope: tenant\n## a\n", r"line 1: unknown directive 'scope' above the first type"),
        ("## self\nscope: tenant\n", r"line 2: unknown directive 'scope' in the `## self`"),
        ("## a\n### b\n", r"line 2: level-3 heading"),
        ("## a\n## A \n", r"line 2: type 'a' is declared twice"),
        ("## a\naliases: x\n## b\naliases: X\n", r"line 4: alias 'x' is already a type or alias"),
        ("## a\n## b\naliases: a\n", r"line 3: alias 'a' is already a type or alias"),
        ("## a\nextends: nothing\n", r"line 1: 'a' extends unknown type 'nothing'"),
        ("## a\nextends: a\n", r"extends forms a cycle: a -> a"),
        ("## a\nextends: b\n## b\nextends: c\n## c\nextends: a\n", r"cycle: a -> b -> c -> a"),
        ("## self\n## self\n", r"line 2: a second `## self` section"),
        ("## self\nnames: x\n", r"line 2: self name 'x' is shorter than 2 characters"),
        ("## ``\n", r"line 1: a name must not be empty"),
    ],
)
def test_bad_documents_name_the_line(text: str, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        parse_ontology(text)


def test_cycle_above_a_declared_scope_is_still_refused() -> None:
    with pytest.raises(InvalidArgument, match="cycle"):
        parse_ontology("## a\nscope: user\nextends: b\n## b\nextends: a\n")


def test_limits() -> None:
    many = "".join(f"## t{i}\n" for i in range(501))
    with pytest.raises(InvalidArgument, match="501 types, over the 500 limit"):
        parse_ontology(many)
    names = ", ".join(f"name {i}" for i in range(25))
    with pytest.raises(InvalidArgument, match="25 self names, over the 24 limit"):
        parse_ontology(f"## self\nnames: {names}\n")
    with pytest.raises(InvalidArgument, match="longer than 100"):
        parse_ontology("## " + "x" * 101 + "\n")


def test_structured_input_builds_the_same_ontology(onto: Ontology) -> None:
    built = ontology_from_dict(
        {
            "status": "confirmed",
            "types": [
                {"name": "Service", "scope": "tenant", "aliases": ["microservice", "API"]},
                {"name": "internal-service", "extends": "service"},
                {"name": "person", "scope": "user"},
                {"name": "location"},
                {"name": "office", "extends": "location", "scope": "TENANT"},
                {"name": "notebook", "scope": "agent"},
            ],
            "self_names": ["account holder", "the customer"],
        }
    )
    assert built == onto
    assert not ontology_from_dict({}).confirmed


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"status": "maybe"}, r"status: unknown status 'maybe'"),
        ({"status": 1}, r"status must be a string"),
        ({"colour": "red"}, r"unknown field\(s\) colour"),
        ({"types": {"name": "a"}}, r"types must be a list"),
        ({"types": ["a"]}, r"types\[0\] must be an object"),
        ({"types": [{"name": "a", "scop": "user"}]}, r"types\[0\]: unknown field\(s\) scop"),
        ({"types": [{"scope": "user"}]}, r"types\[0\].name must be a string"),
        ({"types": [{"name": "a", "scope": "global"}]}, r"types\[0\].scope: scope global"),
        ({"types": [{"name": "a"}, {"name": "A"}]}, r"types\[1\]: type 'a' is declared twice"),
        ({"types": [{"name": "a", "aliases": [3]}]}, r"types\[0\].aliases\[0\] must be a string"),
        ({"types": [{"name": "self"}]}, r"`self` is reserved"),
        ({"types": [{"name": "a", "extends": "b"}, {"name": "b", "extends": "a"}]}, r"cycle"),
        ({"self_names": ["me", ""]}, r"self_names\[1\]: a name must not be empty"),
    ],
)
def test_bad_structured_input_names_the_field(data: dict[str, object], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        ontology_from_dict(data)


# --- placement: happy paths -------------------------------------------------------------------


def test_service_fact_moves_to_tenant(onto: Ontology) -> None:
    p = decide(onto, item("service", "checkout-api"))
    assert (p.scope, p.moved, p.reason, p.entity_type) == (Scope.TENANT, True, R.PLACED, "service")
    assert "moved from USER" in p.message
    assert p.advisory is None


def test_person_preference_goes_to_user(onto: Ontology) -> None:
    p = decide(onto, item("person", "Bob"), requested=Scope.USER)
    assert (p.scope, p.moved, p.reason) == (Scope.USER, False, R.SAME_SCOPE)
    assert "already going there" in p.message
    p = decide(onto, item("person", "Bob"), requested=Scope.AGENT)
    assert (p.scope, p.moved, p.reason) == (Scope.USER, True, R.PLACED)


def test_aliases_and_subtypes_place_like_their_type(onto: Ontology) -> None:
    assert decide(onto, item(" MicroService ", "billing")).scope is Scope.TENANT
    p = decide(onto, item("internal-service", "billing"))
    assert (p.scope, p.reason, p.entity_type) == (Scope.TENANT, R.PLACED, "internal-service")
    assert decide(onto, item("notebook", "ideas")).scope is Scope.AGENT


def test_reference_scenario_51_every_row_has_a_reason(onto: Ontology) -> None:
    rows = place_batch(
        onto,
        who(),
        Scope.USER,
        [item("service", "checkout-api"), item("person", "Bob"), item("location", "Cluj")],
    )
    assert [(r.scope, r.moved) for r in rows] == [
        (Scope.TENANT, True),
        (Scope.USER, False),
        (Scope.USER, False),
    ]
    assert all(r.message for r in rows)


# --- placement: every fail-closed branch ------------------------------------------------------


def test_no_ontology_moves_nothing() -> None:
    p = decide(None, item("service", "checkout-api"))
    assert (p.scope, p.moved, p.reason) == (Scope.USER, False, R.NO_ONTOLOGY)


def test_draft_ontology_moves_nothing() -> None:
    for text in ("status: draft\n## service\nscope: tenant\n", "## service\nscope: tenant\n"):
        p = decide(parse_ontology(text), item("service", "checkout-api"))
        assert (p.scope, p.moved, p.reason) == (Scope.USER, False, R.DRAFT_ONTOLOGY)
        assert "draft" in p.message


@pytest.mark.parametrize(
    ("it", "reason"),
    [
        (item(None, "checkout-api"), R.TYPE_MISSING),
        (item("   ", "checkout-api"), R.TYPE_MISSING),
        (item("service", None), R.SUBJECT_MISSING),
        (item("service", "  "), R.SUBJECT_MISSING),
        (item("spaceship", "enterprise"), R.TYPE_UNDECLARED),
        (item("location", "Cluj"), R.NO_SCOPE_DECLARED),
        (item("service", "me"), R.SUBJECT_IS_SELF),
        (item("service", "checkout-api", "person"), R.CONFLICTING_TYPES),
    ],
)
def test_item_branches_stay_in_the_requested_scope(
    onto: Ontology, it: PlacementItem, reason: PlacementReason
) -> None:
    for requested in (Scope.USER, Scope.AGENT):
        p = decide(onto, it, requested=requested)
        assert (p.scope, p.moved, p.reason) == (requested, False, reason)
        assert f"stays in {requested.value}" in p.message


def test_messages_name_the_type(onto: Ontology) -> None:
    assert "'spaceship'" in decide(onto, item("Spaceship", "x")).message
    assert "'location' declares no scope" in decide(onto, item("location", "x")).message
    assert "'service' is given but no subject" in decide(onto, item("service", "")).message


def test_tenant_in_memory_but_not_in_sql_scopes(onto: Ontology) -> None:
    # None is the default grant (USER + TENANT); then the unset sql_scopes (USER) refuses.
    principal = who(memory_scopes=None, sql_scopes=None)
    p = place(onto, principal, Scope.USER, item("service", "checkout-api"))
    assert (p.scope, p.moved, p.reason) == (Scope.USER, False, R.SCOPE_NOT_GRANTED)
    assert "not granted in this token's sql_scopes" in p.message


NO_TENANT = [
    who(memory_scopes=frozenset({Scope.USER})),
    who(memory_scopes=frozenset({Scope.AGENT, Scope.USER})),
    who(memory_scopes=frozenset({Scope.AGENT, Scope.USER}), sql_scopes=None),
]


@pytest.mark.parametrize("principal", NO_TENANT)
def test_without_tenant_access_placement_tells_nothing_of_the_ontology(
    onto: Ontology, principal: Principal
) -> None:
    """Finding 7: type names, aliases and declared scopes leaked to tokens without TENANT."""
    items = [
        item("service", "checkout-api"),
        item("API", "x"),  # an alias
        item("person", "Bob"),
        item("notebook", "ideas"),
        item("spaceship", "Enterprise"),
        item("service", "checkout-api", "person"),
        item("service", "account holder"),
        item(None, None),
    ]
    expected = (
        "placement follows the tenant ontology, which needs TENANT in this token's "
        "memory_scopes; it stays in USER"
    )
    for ontology in (onto, parse_ontology(DOC.replace("confirmed", "draft")), None):
        for p in place_batch(ontology, principal, Scope.USER, items):
            assert p == Placement(Scope.USER, False, R.NO_TENANT_ACCESS, expected)
    if Scope.AGENT in granted_scopes(principal, Plane.MEMORY):
        # not even a move between its own scopes, which would tell the type's scope
        p = place(onto, principal, Scope.AGENT, item("person", "Bob"))
        assert (p.scope, p.moved, p.reason) == (Scope.AGENT, False, R.NO_TENANT_ACCESS)


def test_no_grants_at_all_refuse_the_requested_scope(onto: Ontology) -> None:
    with pytest.raises(Forbidden, match=r"memory_scopes \(granted: none\)"):
        place(onto, who(memory_scopes=frozenset()), Scope.USER, item("service", "x"))


def test_tenant_needs_the_sql_grant_too(onto: Ontology) -> None:
    principal = who(sql_scopes=frozenset({Scope.USER}))
    p = place(onto, principal, Scope.USER, item("service", "checkout-api"))
    assert (p.scope, p.moved, p.reason) == (Scope.USER, False, R.SCOPE_NOT_GRANTED)
    assert "sql_scopes (granted: USER)" in p.message


def test_agent_and_user_targets_need_only_the_memory_grant(onto: Ontology) -> None:
    principal = who(memory_scopes=frozenset({Scope.USER, Scope.TENANT}), sql_scopes=frozenset())
    p = place(onto, principal, Scope.USER, item("notebook", "ideas"))
    assert (p.scope, p.reason) == (Scope.USER, R.SCOPE_NOT_GRANTED)
    assert "memory_scopes (granted: TENANT, USER)" in p.message
    principal = who(sql_scopes=frozenset())
    p = place(onto, principal, Scope.AGENT, item("person", "Bob"))
    assert (p.scope, p.reason) == (Scope.USER, R.PLACED)


def test_isolated_caller_never_reaches_tenant(onto: Ontology) -> None:
    # Reference 10.60: full grants, isolated -> stays, and says why.
    p = decide(onto, item("service", "checkout-api"), who(isolated=True))
    assert p == Placement(
        Scope.USER,
        False,
        R.ISOLATED,
        "the caller is isolated from the tenant, so the tenant ontology does not apply; "
        "it stays in USER",
    )
    # Unlike the reference, nothing moves between its own scopes either (finding 7): the
    # move would tell the type's declared scope to a caller who may not read the ontology.
    p = decide(onto, item("person", "Bob"), who(isolated=True), Scope.AGENT)
    assert (p.scope, p.moved, p.reason, p.entity_type) == (Scope.AGENT, False, R.ISOLATED, None)


def test_target_owner_missing_from_the_token(onto: Ontology) -> None:
    p = decide(onto, item("notebook", "ideas"), who(agent_name=None))
    assert (p.scope, p.moved, p.reason) == (Scope.USER, False, R.OWNER_MISSING)
    assert "agent name" in p.message
    p = decide(onto, item("person", "Bob"), who(user_id=None), Scope.AGENT)
    assert (p.scope, p.moved, p.reason) == (Scope.AGENT, False, R.OWNER_MISSING)
    assert "user id" in p.message


def test_requested_scope_must_itself_be_granted(onto: Ontology) -> None:
    with pytest.raises(Forbidden, match="memory_scopes"):
        place(onto, who(memory_scopes=frozenset({Scope.AGENT})), Scope.USER, item("a", "b"))
    with pytest.raises(Forbidden, match="isolated"):
        place_batch(onto, who(isolated=True), Scope.TENANT, [item("a", "b")])
    with pytest.raises(Forbidden, match="user id"):
        place(None, who(user_id=None), Scope.USER, item("a", "b"))


def test_conflicting_types_advise_one_type(onto: Ontology) -> None:
    p = decide(onto, item("service", "checkout-api", "person", "service"))
    assert p.reason is R.CONFLICTING_TYPES
    assert p.advisory is not None
    for word in ("'checkout-api'", "'service' (TENANT)", "'person' (USER)", "ONE type"):
        assert word in p.advisory
    # Types agreeing on scope, scope-less types, unknown types and aliases are no conflict.
    p = decide(onto, item("service", "checkout-api", "internal-service", "API", "location", "x"))
    assert (p.reason, p.advisory, p.scope) == (R.PLACED, None, Scope.TENANT)


def test_global_requested_by_an_operator_can_be_placed(onto: Ontology) -> None:
    operator = who(roles=frozenset({Role.OPERATOR}), memory_scopes=frozenset(Scope))
    p = place(onto, operator, Scope.GLOBAL, item("service", "checkout-api"))
    assert (p.scope, p.moved) == (Scope.TENANT, True)
    p = place(onto, operator, Scope.GLOBAL, item("location", "Cluj"))
    assert (p.scope, p.moved) == (Scope.GLOBAL, False)
    admin = who(roles=frozenset({Role.ADMIN}), memory_scopes=frozenset(Scope))
    with pytest.raises(Forbidden, match="operator role"):
        place(onto, admin, Scope.GLOBAL, item("location", "Cluj"))


# --- self detection ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "subject",
    [
        "user",
        "the user",
        "User",
        " user ",
        "me",
        "ME",
        "I",
        "my",
        "myself",
        "current  user",
        "operator",
        "alice",
        "ALICE",
        "account holder",
        "The Customer",
        "customer",
    ],
)
def test_self_subjects_stay(onto: Ontology, subject: str) -> None:
    p = decide(onto, item("office", subject))
    assert (p.scope, p.moved, p.reason) == (Scope.USER, False, R.SUBJECT_IS_SELF)


def test_non_self_subjects_move(onto: Ontology) -> None:
    for subject in ("Cluj-Napoca office", "my office", "users", "alice smith"):
        assert decide(onto, item("office", subject)).reason is R.PLACED


def test_profile_self_names_are_honoured(onto: Ontology) -> None:
    names = ["Ada Lovelace", "Ada"]
    for subject in ("Ada Lovelace", "ada", " ADA  lovelace "):
        p = place(onto, who(), Scope.USER, item("office", subject), self_names=names)
        assert p.reason is R.SUBJECT_IS_SELF
    p = place(onto, who(), Scope.USER, item("service", "checkout-api"), self_names=names)
    assert p.reason is R.PLACED
    # Known limitation (reference 5.3): an undeclared own name is not recognised.
    assert decide(onto, item("office", "Ada Lovelace")).reason is R.PLACED


def test_self_guard_is_skipped_when_the_target_is_user(onto: Ontology) -> None:
    p = decide(onto, item("person", "me"), requested=Scope.AGENT)
    assert (p.scope, p.reason) == (Scope.USER, R.PLACED)


# --- order of the checks (reference 5.3) ------------------------------------------------------


def test_order_tenant_access_then_ontology_state_win_over_everything() -> None:
    draft = parse_ontology("## service\nscope: tenant\n")
    assert decide(draft, item(None, None), who(isolated=True)).reason is R.ISOLATED
    assert decide(draft, item(None, None), who()).reason is R.DRAFT_ONTOLOGY


@pytest.mark.parametrize(
    ("it", "principal", "reason"),
    [
        (item(None, None), who(), R.TYPE_MISSING),
        (item("spaceship", None), who(), R.SUBJECT_MISSING),
        (item("spaceship", "me"), who(sql_scopes=None), R.TYPE_UNDECLARED),
        (item("location", "me", "service"), who(sql_scopes=None), R.NO_SCOPE_DECLARED),
        (item("service", "me", "person"), who(sql_scopes=None), R.SUBJECT_IS_SELF),
        (item("service", "x", "person"), who(sql_scopes=None), R.CONFLICTING_TYPES),
        (item("service", "x"), who(sql_scopes=None), R.SCOPE_NOT_GRANTED),
        (item("service", "x"), who(isolated=True), R.ISOLATED),
        (item("notebook", "x"), who(agent_name=None), R.OWNER_MISSING),
    ],
)
def test_order_first_failing_check_wins(
    onto: Ontology, it: PlacementItem, principal: Principal, reason: PlacementReason
) -> None:
    assert decide(onto, it, principal).reason is reason


# --- batches ----------------------------------------------------------------------------------


def test_batch_limits(onto: Ontology) -> None:
    with pytest.raises(InvalidArgument, match="items is required"):
        place_batch(onto, who(), Scope.USER, [])
    with pytest.raises(InvalidArgument, match="201 items, over the 200 limit — split the batch"):
        place_batch(onto, who(), Scope.USER, [item("service", "x")] * (MAX_BATCH + 1))
    rows = place_batch(onto, who(), Scope.USER, [item("service", "x")] * MAX_BATCH)
    assert len(rows) == MAX_BATCH


def test_batch_matches_single_decisions(onto: Ontology) -> None:
    items = [item("service", "a"), item("office", "me"), item(None, "x"), item("person", "b")]
    rows = place_batch(onto, who(), Scope.AGENT, items, self_names=["Ada"])
    assert rows == [place(onto, who(), Scope.AGENT, i, self_names=["Ada"]) for i in items]


# --- the invariant ----------------------------------------------------------------------------

_scopes = st.sampled_from(list(Scope))
_grants = st.none() | st.frozensets(_scopes)
_types = st.sampled_from(
    [
        "service",
        "internal-service",
        "person",
        "location",
        "office",
        "notebook",
        "api",
        "unknown",
        "",
        None,
    ]
)
_subjects = st.sampled_from(["checkout-api", "me", "alice", "the user", "Cluj", "", None])


@settings(max_examples=400, deadline=None)
@given(
    memory=_grants,
    sql=_grants,
    isolated=st.booleans(),
    roles=st.frozensets(st.sampled_from([Role.ADMIN, Role.OPERATOR])),
    user=st.sampled_from(["alice", None]),
    agent=st.sampled_from(["planner", None]),
    requested=_scopes,
    entity_type=_types,
    subject=_subjects,
    recorded=st.frozensets(st.sampled_from(["service", "person", "office", "nothing"])),
    draft=st.booleans(),
)
def test_never_leaves_the_granted_scopes(
    memory: frozenset[Scope] | None,
    sql: frozenset[Scope] | None,
    isolated: bool,
    roles: frozenset[Role],
    user: str | None,
    agent: str | None,
    requested: Scope,
    entity_type: str | None,
    subject: str | None,
    recorded: frozenset[str],
    draft: bool,
) -> None:
    principal = who(
        memory_scopes=memory,
        sql_scopes=sql,
        isolated=isolated,
        roles=roles,
        user_id=user,
        agent_name=agent,
    )
    onto = parse_ontology(DOC.replace("status: confirmed", "status: draft") if draft else DOC)
    try:
        resolve_scope(principal, requested)
    except Forbidden:
        with pytest.raises(Forbidden):
            place(onto, principal, requested, item(entity_type, subject, *recorded))
        return
    p = place(onto, principal, requested, item(entity_type, subject, *recorded))
    assert p.scope in granted_scopes(principal, Plane.MEMORY)
    assert p.moved == (p.scope is not requested)
    assert p.moved == (p.reason is R.PLACED)
    if p.moved:
        resolve_scope(principal, p.scope)  # the writer's own checks will pass too
        assert p.scope is not Scope.GLOBAL
        if p.scope is Scope.TENANT:
            assert Scope.TENANT in granted_scopes(principal, Plane.SQL)
            assert not isolated
    if isolated:
        assert p.scope not in (Scope.TENANT, Scope.GLOBAL)
    if Scope.TENANT not in granted_scopes(principal, Plane.MEMORY):
        # No ontology detail: the answer is the one a tenant without any ontology gets.
        assert p == place(None, principal, requested, item(None, None))
        assert p.reason in (R.ISOLATED, R.NO_TENANT_ACCESS)
        assert (p.moved, p.entity_type, p.advisory) == (False, None, None)
    elif draft:
        assert p.reason is R.DRAFT_ONTOLOGY
