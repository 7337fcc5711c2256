"""The GraphQL surface: no argument or input field can name an owner, tenant or scope key."""

from __future__ import annotations

import re
from typing import Any

from palimpsest.graphql.schema import build_schema

FORBIDDEN = re.compile(r"(tenant|owner|scope_?key|user_?id|agent_?name|principal)", re.I)

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
    assert offending == []


def test_scope_enum_has_the_four_scopes() -> None:
    result = build_schema().execute_sync('{ __type(name: "Scope") { enumValues { name } } }')
    assert result.data is not None
    assert [v["name"] for v in result.data["__type"]["enumValues"]] == [
        "AGENT",
        "USER",
        "TENANT",
        "GLOBAL",
    ]
