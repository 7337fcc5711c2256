"""The tenant ontology: which entity types exist and which scope their facts belong in.

Pure parsing and validation; nothing here touches the database. ``placement.py`` makes the
per-fact decision of docs/spec.md, Placement, from an ``Ontology``.

Markdown format (one directive per line, ``key: value``; keys are case-insensitive, backticks
and list bullets around a directive are ignored, prose lines that do not start with ``word:``
are ignored, and so are fenced code, block quotes and HTML)::

    # Tenant ontology
    status: confirmed            <- document level, above the first type: confirmed | draft

    ## service
    scope: tenant                <- agent | user | tenant | none
    aliases: microservice, api   <- repeatable, comma-separated

    ## internal-service
    extends: service             <- inherits TENANT; a subtype's own `scope:` overrides

    ## person
    scope: user

    ## self
    names: account holder, the customer   <- `names:` / `aliases:`, repeatable

Rules, all failing closed:

- A missing ``status`` is a draft; a draft moves nothing. Any other status value is refused.
- ``## <name>`` (ATX or setext, level 2) declares a type. Names are trimmed, whitespace is
  collapsed and case is folded, so ``## Service`` and ``service`` are the same type. Level 1
  headings are titles (their directives are document level); level 3+ headings are refused,
  because nesting would hide which type a directive belongs to: use ``extends:``.
- ``## self`` is reserved: it lists tenant-wide words by which users refer to the profile owner.
  Per-user names (a user's own name) come from the user's profile, passed to ``place()``.
- ``scope: global`` is refused: the ontology belongs to one tenant, and GLOBAL (all tenants,
  admin only) is never a placement target. ``scope: none`` makes a subtype stop inheriting.
- Unknown directives, unknown values, a directive given twice, an unknown parent, a cycle in
  ``extends``, a duplicate type, alias or self section are ``InvalidArgument`` naming the line.

``ontology_from_dict`` builds the same ``Ontology`` from plain data (the GraphQL input), with
errors naming the field path instead of the line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from markdown_it import MarkdownIt

from palimpsest.errors import InvalidArgument
from palimpsest.identity.principal import Scope
from palimpsest.schema.names import normalise

MAX_TYPES = 500
MAX_NAME_CHARS = 100
MAX_SELF_NAMES = 24
SELF_SECTION = "self"

_DIRECTIVE = re.compile(r"^([A-Za-z][A-Za-z_-]*)\s*:\s*(.*)$")
_PLACEABLE = {"agent": Scope.AGENT, "user": Scope.USER, "tenant": Scope.TENANT}
_NO_SCOPE = "none"
_DOC_KEYS = ("status", "description")
_TYPE_KEYS = ("scope", "extends", "aliases", "description")
_SELF_KEYS = ("names", "aliases", "description")


class OntologyStatus(StrEnum):
    CONFIRMED = "confirmed"
    DRAFT = "draft"


@dataclass(frozen=True, slots=True)
class EntityType:
    name: str
    parent: str | None
    declared_scope: Scope | None
    # Effective scope: declared, else the nearest ancestor's (None: the type places nothing).
    scope: Scope | None
    aliases: frozenset[str]


@dataclass(frozen=True)
class Ontology:
    status: OntologyStatus
    types: Mapping[str, EntityType]
    self_names: frozenset[str]
    # Every normalised type name and alias -> canonical type name.
    _lookup: Mapping[str, str] = field(repr=False)

    @property
    def confirmed(self) -> bool:
        return self.status is OntologyStatus.CONFIRMED

    def find(self, name: str | None) -> EntityType | None:
        """The type called ``name`` (or aliased so), case-insensitively; None if not in force."""
        if name is None:
            return None
        canonical = self._lookup.get(normalise(name))
        return None if canonical is None else self.types[canonical]


@dataclass(slots=True, eq=False)  # identity semantics: compared with `in` when walking
class _RawType:
    name: str
    where: str
    scope: str | None = None  # None: not declared, inherit
    parent: str | None = None
    aliases: list[tuple[str, str]] = field(default_factory=list)  # (alias, where)
    seen: set[str] = field(default_factory=set)


def parse_ontology(text: str) -> Ontology:
    """Parse the Markdown ontology described in the module docstring."""
    status: str | None = None
    types: list[_RawType] = []
    self_names: list[tuple[str, str]] = []
    section: str = "document"  # "document" | "type" | "self"
    self_seen = False
    status_where = "status"
    seen_doc: set[str] = set()
    for kind, level, line_no, content in _blocks(text):
        where = f"line {line_no}"
        if kind == "heading":
            if level >= 3:
                raise InvalidArgument(
                    f"{where}: level-{level} heading; declare every type as `## name` "
                    "and use `extends: parent` for subtypes"
                )
            if level == 1:
                section = "document"
                continue
            name = _check_name(content.replace("`", ""), where)
            if name == SELF_SECTION:
                if self_seen:
                    raise InvalidArgument(f"{where}: a second `## self` section")
                self_seen, section = True, "self"
            else:
                types.append(_RawType(name, where))
                section = "type"
            continue
        match = _DIRECTIVE.match(content.replace("`", "").strip())
        if match is None:
            continue  # prose
        key, value = match.group(1).lower(), match.group(2).strip()
        if section == "document":
            _check_key(key, _DOC_KEYS, seen_doc, where, "above the first type")
            if key == "status":
                status, status_where = value, where
        elif section == "self":
            _check_key(key, _SELF_KEYS, set(), where, "in the `## self` section")
            if key != "description":
                self_names += [(n, where) for n in _split(value)]
        else:
            raw = types[-1]
            _check_key(key, _TYPE_KEYS, raw.seen, where, f"in type {raw.name!r}")
            if key == "scope":
                raw.scope = _first_word(value)
                _scope_value(raw.scope, where)
            elif key == "extends":
                raw.parent = _check_name(value, where)
            elif key == "aliases":
                raw.aliases += [(a, where) for a in _split(value)]
    return _build(_status(status, status_where), types, self_names)


def ontology_from_dict(data: Mapping[str, object]) -> Ontology:
    """Build an ``Ontology`` from structured input: ``{"status": "confirmed", "types":
    [{"name", "scope"?, "extends"?, "aliases"?}], "self_names": [...]}``."""
    _no_extra(data, {"status", "types", "self_names"}, "ontology")
    status = data.get("status")
    if status is not None and not isinstance(status, str):
        raise InvalidArgument("status must be a string")
    types: list[_RawType] = []
    for i, item in enumerate(_list(data.get("types"), "types")):
        where = f"types[{i}]"
        if not isinstance(item, Mapping):
            raise InvalidArgument(f"{where} must be an object")
        _no_extra(item, {"name", "scope", "extends", "aliases"}, where)
        name = _check_name(_str(item.get("name"), f"{where}.name"), f"{where}.name")
        if name == SELF_SECTION:
            raise InvalidArgument(f"{where}.name: `self` is reserved; use self_names")
        raw = _RawType(name, where)
        if item.get("scope") is not None:
            raw.scope = _str(item["scope"], f"{where}.scope").strip().lower()
            _scope_value(raw.scope, f"{where}.scope")
        if item.get("extends") is not None:
            raw.parent = _check_name(_str(item["extends"], f"{where}.extends"), where)
        for j, alias in enumerate(_list(item.get("aliases"), f"{where}.aliases")):
            raw.aliases.append((_str(alias, f"{where}.aliases[{j}]"), f"{where}.aliases[{j}]"))
        types.append(raw)
    names = [
        (_str(n, f"self_names[{i}]"), f"self_names[{i}]")
        for i, n in enumerate(_list(data.get("self_names"), "self_names"))
    ]
    return _build(_status(status, "status"), types, names)


def _build(
    status: OntologyStatus, raw_types: list[_RawType], raw_self: list[tuple[str, str]]
) -> Ontology:
    if len(raw_types) > MAX_TYPES:
        raise InvalidArgument(f"{len(raw_types)} types, over the {MAX_TYPES} limit")
    lookup: dict[str, str] = {}
    by_name: dict[str, _RawType] = {}
    for raw in raw_types:
        if raw.name in lookup:
            raise InvalidArgument(f"{raw.where}: type {raw.name!r} is declared twice")
        lookup[raw.name] = raw.name
        by_name[raw.name] = raw
    for raw in raw_types:
        for alias, where in raw.aliases:
            key = _check_name(alias, where)
            if key in lookup:
                raise InvalidArgument(f"{where}: alias {key!r} is already a type or alias")
            lookup[key] = raw.name
    for raw in raw_types:
        if raw.parent is not None:
            if raw.parent not in lookup:
                raise InvalidArgument(
                    f"{raw.where}: {raw.name!r} extends unknown type {raw.parent!r}"
                )
            raw.parent = lookup[raw.parent]
    types = {raw.name: _resolve(raw, by_name) for raw in raw_types}
    self_names: set[str] = set()
    for name, where in raw_self:
        key = _check_name(name, where)
        if len(key) < 2:
            raise InvalidArgument(f"{where}: self name {key!r} is shorter than 2 characters")
        self_names.add(key)
    if len(self_names) > MAX_SELF_NAMES:
        raise InvalidArgument(f"{len(self_names)} self names, over the {MAX_SELF_NAMES} limit")
    return Ontology(status, types, frozenset(self_names), lookup)


def _resolve(raw: _RawType, by_name: Mapping[str, _RawType]) -> EntityType:
    """Walk up ``extends`` (refusing cycles); the nearest declared scope is the effective one."""
    chain = [raw]
    while chain[-1].parent is not None:
        parent = by_name[chain[-1].parent]
        if parent in chain:
            names = [r.name for r in chain[chain.index(parent) :]]
            cycle = " -> ".join([*names, parent.name])
            raise InvalidArgument(f"{chain[-1].where}: extends forms a cycle: {cycle}")
        chain.append(parent)
    inherited = next((r.scope for r in chain if r.scope is not None), None)
    aliases = frozenset(normalise(a) for a, _ in raw.aliases)
    return EntityType(raw.name, raw.parent, _scope(raw.scope), _scope(inherited), aliases)


def _scope(value: str | None) -> Scope | None:
    return None if value is None else _PLACEABLE.get(value)


def _blocks(text: str) -> list[tuple[str, int, int, str]]:
    """(kind, heading level, 1-based line, text) per heading and per paragraph line.

    markdown-it finds the blocks, so fenced code, setext headings and lazy list continuations
    are read as a Markdown reader sees them; block quotes and tables are prose.
    """
    out: list[tuple[str, int, int, str]] = []
    tokens = MarkdownIt("commonmark").parse(text)
    quoted = 0
    for i, tok in enumerate(tokens):
        if tok.type == "blockquote_open":
            quoted += 1
        elif tok.type == "blockquote_close":
            quoted -= 1
        elif tok.type != "inline" or tok.map is None or quoted:
            continue
        elif tokens[i - 1].type == "heading_open":
            out.append(("heading", int(tokens[i - 1].tag[1:]), tok.map[0] + 1, tok.content))
        elif tokens[i - 1].type == "paragraph_open":
            for offset, line in enumerate(tok.content.split("\n")):
                out.append(("line", 0, tok.map[0] + 1 + offset, line))
    return out


def _check_key(key: str, allowed: Sequence[str], seen: set[str], where: str, place: str) -> None:
    if key not in allowed:
        hint = " (a document directive: put it above the first type)" if key == "status" else ""
        raise InvalidArgument(
            f"{where}: unknown directive {key!r} {place}{hint}; "
            f"expected one of: {', '.join(allowed)}"
        )
    if key in ("scope", "extends", "status"):
        if key in seen:
            raise InvalidArgument(f"{where}: {key!r} is given twice")
        seen.add(key)


def _scope_value(value: str, where: str) -> None:
    if value == "global":
        raise InvalidArgument(
            f"{where}: scope global cannot be declared: it spans all tenants and is admin only; "
            "use tenant"
        )
    if value not in _PLACEABLE and value != _NO_SCOPE:
        raise InvalidArgument(
            f"{where}: unknown scope {value!r}; expected one of: agent, user, tenant, none"
        )


def _status(value: str | None, where: str) -> OntologyStatus:
    if value is None:
        return OntologyStatus.DRAFT
    word = _first_word(value)
    try:
        return OntologyStatus(word)
    except ValueError:
        raise InvalidArgument(
            f"{where}: unknown status {value.strip()!r}; expected confirmed or draft"
        ) from None


def _check_name(text: str, where: str) -> str:
    name = normalise(text)
    if not name:
        raise InvalidArgument(f"{where}: a name must not be empty")
    if len(name) > MAX_NAME_CHARS:
        raise InvalidArgument(f"{where}: a name is longer than {MAX_NAME_CHARS} characters")
    return name


def _first_word(value: str) -> str:
    words = value.split()
    return words[0].lower() if words else ""


def _split(value: str) -> list[str]:
    return [part for part in (p.strip() for p in value.split(",")) if part]


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
