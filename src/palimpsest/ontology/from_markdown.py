"""The tenant ontology in Markdown: which entity types exist and which scope their facts belong in.

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
    single: lives in, works at   <- predicates a subject holds one value of at a time
    same: lives in = resides in  <- spellings of one predicate (the first is the canonical)

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
- ``single:`` and ``same:`` are repeatable; a subtype inherits its ancestors' (docs/spec.md,
  Reconciliation). Predicates are compared after ``normalise``. A ``same:`` line needs two or
  more non-empty predicates separated by ``=``; an empty ``single:`` or ``same:`` line, an empty
  predicate, or a spelling given as the alias of two predicates is refused naming the line.
- Unknown directives, unknown values, a directive given twice, an unknown parent, a cycle in
  ``extends``, a duplicate type, alias or self section are ``InvalidArgument`` naming the line.

``ontology_from_dict`` builds the same ``Ontology`` from plain data (the GraphQL input), with
errors naming the field path instead of the line.
"""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from palimpsest.errors import InvalidArgument
from palimpsest.ontology import predicates
from palimpsest.ontology.build import (
    SELF_SECTION,
    RawType,
    build,
    check_key,
    check_name,
    first_word,
    scope_value,
    split,
    status_of,
)
from palimpsest.ontology.model import Ontology

_DIRECTIVE = re.compile(r"^([A-Za-z][A-Za-z_-]*)\s*:\s*(.*)$")
_DOC_KEYS = ("status", "description")
_TYPE_KEYS = ("scope", "extends", "aliases", "single", "same", "description")
_SELF_KEYS = ("names", "aliases", "description")


def parse_ontology(text: str) -> Ontology:
    """Parse the Markdown ontology described in the module docstring."""
    status: str | None = None
    types: list[RawType] = []
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
            name = check_name(content.replace("`", ""), where)
            if name == SELF_SECTION:
                if self_seen:
                    raise InvalidArgument(f"{where}: a second `## self` section")
                self_seen, section = True, "self"
            else:
                types.append(RawType(name, where))
                section = "type"
            continue
        match = _DIRECTIVE.match(content.replace("`", "").strip())
        if match is None:
            continue  # prose
        key, value = match.group(1).lower(), match.group(2).strip()
        if section == "document":
            check_key(key, _DOC_KEYS, seen_doc, where, "above the first type")
            if key == "status":
                status, status_where = value, where
        elif section == "self":
            check_key(key, _SELF_KEYS, set(), where, "in the `## self` section")
            if key != "description":
                self_names += [(n, where) for n in split(value)]
        else:
            raw = types[-1]
            check_key(key, _TYPE_KEYS, raw.seen, where, f"in type {raw.name!r}")
            if key == "scope":
                raw.scope = first_word(value)
                scope_value(raw.scope, where)
            elif key == "extends":
                raw.parent = check_name(value, where)
            elif key == "aliases":
                raw.aliases += [(a, where) for a in split(value)]
            elif key == "single":
                raw.single += predicates.single_line(value, where)
            elif key == "same":
                raw.same += predicates.same_line(value, where)
    return build(status_of(status, status_where), types, self_names)


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
