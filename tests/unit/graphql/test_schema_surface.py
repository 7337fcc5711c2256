"""The GraphQL surface: no argument or input field can name an owner, tenant or scope key."""

from __future__ import annotations

import re
from typing import Any

from strawberry.utils.str_converters import to_camel_case

from palimpsest.graphql.admin import AdminMutation, AdminQuery
from palimpsest.graphql.schema import build_schema

FORBIDDEN = re.compile(r"(tenant|owner|scope_?key|user_?id|agent_?name|principal)", re.I)
# The one exception: admin fields that name a user, kept together in graphql/admin.py and
# admin-checked in identity.person_refs.
ADMIN_NAMES_A_USER = {"Mutation.eraseUser(userId)"}

INTROSPECT = """
{ __schema { types { name kind
    fields { name args { name } }
    inputFields { name } } } }
"""


def test_no_argument_or_input_field_names_an_owner() -> None:
    result = build_schema().execute_sync(INTROSPECT)
    assert result.errors is None
    data: dict[str, Any] = result.data or {}
    names: list[str] = []
    for t in data["__schema"]["types"]:
        if t["name"].startswith("__"):
            continue
        for field in t["fields"] or []:
            names += [f"{t['name']}.{field['name']}({a['name']})" for a in field["args"]]
        names += [f"{t['name']}.{f['name']}" for f in t["inputFields"] or []]
    assert names, "introspection found no arguments at all"
    offending = [n for n in names if FORBIDDEN.search(n.rsplit(".", 1)[-1])]
    assert sorted(offending) == sorted(ADMIN_NAMES_A_USER)


def test_the_fields_naming_a_user_are_in_the_admin_module() -> None:
    admin = {
        f"{kind}.{to_camel_case(f.python_name)}"
        for kind, t in (("Query", AdminQuery), ("Mutation", AdminMutation))
        for f in t.__strawberry_definition__.fields
    }
    assert {name.split("(")[0] for name in ADMIN_NAMES_A_USER} <= admin


def test_scope_enum_has_the_four_scopes() -> None:
    result = build_schema().execute_sync('{ __type(name: "Scope") { enumValues { name } } }')
    assert result.data is not None
    assert [v["name"] for v in result.data["__type"]["enumValues"]] == [
        "AGENT",
        "USER",
        "TENANT",
        "GLOBAL",
    ]
