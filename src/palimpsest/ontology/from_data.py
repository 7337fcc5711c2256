"""The tenant ontology from plain data (the GraphQL input): errors name the field path."""

from __future__ import annotations

from collections.abc import Mapping

from palimpsest.errors import InvalidArgument
from palimpsest.ontology import predicates
from palimpsest.ontology.build import (
    SELF_SECTION,
    RawType,
    build,
    check_name,
    scope_value,
    status_of,
)
from palimpsest.ontology.model import Ontology


def ontology_from_dict(data: Mapping[str, object]) -> Ontology:
    """Build an ``Ontology`` from structured input: ``{"status": "confirmed", "types":
    [{"name", "scope"?, "extends"?, "aliases"?, "single"?, "same"?}], "self_names": [...]}``;
    ``single`` lists predicates, ``same`` lists groups of spellings (lists of strings)."""
    _no_extra(data, {"status", "types", "self_names"}, "ontology")
    status = data.get("status")
    if status is not None and not isinstance(status, str):
        raise InvalidArgument("status must be a string")
    types: list[RawType] = []
    for i, item in enumerate(_list(data.get("types"), "types")):
        where = f"types[{i}]"
        if not isinstance(item, Mapping):
            raise InvalidArgument(f"{where} must be an object")
        _no_extra(item, {"name", "scope", "extends", "aliases", "single", "same"}, where)
        name = check_name(_str(item.get("name"), f"{where}.name"), f"{where}.name")
        if name == SELF_SECTION:
            raise InvalidArgument(f"{where}.name: `self` is reserved; use self_names")
        raw = RawType(name, where)
        if item.get("scope") is not None:
            raw.scope = _str(item["scope"], f"{where}.scope").strip().lower()
            scope_value(raw.scope, f"{where}.scope")
        if item.get("extends") is not None:
            raw.parent = check_name(_str(item["extends"], f"{where}.extends"), where)
        for j, alias in enumerate(_list(item.get("aliases"), f"{where}.aliases")):
            raw.aliases.append((_str(alias, f"{where}.aliases[{j}]"), f"{where}.aliases[{j}]"))
        for j, predicate in enumerate(_list(item.get("single"), f"{where}.single")):
            at = f"{where}.single[{j}]"
            raw.single += predicates.single_line(_str(predicate, at), at)
        for j, group in enumerate(_list(item.get("same"), f"{where}.same")):
            at = f"{where}.same[{j}]"
            parts = [_str(p, f"{at}[{k}]") for k, p in enumerate(_list(group, at))]
            if any("=" in p for p in parts):
                raise InvalidArgument(f"{at}: a predicate must not contain '='")
            raw.same += predicates.same_line(" = ".join(parts), at)
        types.append(raw)
    names = [
        (_str(n, f"self_names[{i}]"), f"self_names[{i}]")
        for i, n in enumerate(_list(data.get("self_names"), "self_names"))
    ]
    return build(status_of(status, "status"), types, names)


def _no_extra(data: Mapping[str, object], allowed: set[str], where: str) -> None:
    extra = sorted(set(data) - allowed)
    if extra:
        raise InvalidArgument(f"{where}: unknown field(s) {', '.join(extra)}")


def _list(value: object, where: str) -> list[object]:
    if value is None:
        return []
    if not isinstance(value, list | tuple):
        raise InvalidArgument(f"{where} must be a list")
    return list(value)


def _str(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise InvalidArgument(f"{where} must be a string")
    return value
