"""Namespaced notes (docs/reference/langgraph.md): search a namespace with value filters and
a query, and list namespaces. The LangGraph store reaches these through GraphQL; get, put and delete
are the key/value plane's own operations on ``namespaces.note_key``.

Filters run here, on the server: the notes under the namespace prefix are read page by page
(in key order, or nearest the query first; pages of 200 doubling to 5000) and only the ones
that pass are returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from palimpsest.cypher import store as q
from palimpsest.cypher.driver.executor import Row
from palimpsest.domain.notes import namespaces as ns
from palimpsest.errors import InvalidArgument
from palimpsest.identity import Principal, Scope, ScopeRef, resolve_scope
from palimpsest.resolvers.notes.keyvalue import MAX_EMBED_TEXT_CHARS, _entry
from palimpsest.resolvers.services import Services
from palimpsest.schema.models import NamespacedNote

MAX_LIMIT = 1000
MAX_OFFSET = 10_000
_PAGE = 200
_MAX_PAGE = 5000


def _check_window(limit: int, offset: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}")
    if not 0 <= offset <= MAX_OFFSET:
        raise InvalidArgument(f"offset must be between 0 and {MAX_OFFSET}")


async def search(
    svc: Services,
    who: Principal,
    scope: Scope,
    namespace_prefix: Sequence[str],
    filter_: Any,
    query: str | None,
    limit: int,
    offset: int,
) -> list[NamespacedNote]:
    """The notes in ``namespace_prefix`` or below it whose values pass ``filter_``, nearest
    ``query`` first (by the server's embedding) or else in key order; ``offset`` of them
    skipped, at most ``limit`` returned."""
    ref = resolve_scope(who, scope)
    prefix = ns.namespace_prefix(ns.check_labels(namespace_prefix))
    conditions = ns.check_filter(filter_)
    _check_window(limit, offset)
    if query is not None and len(query) > MAX_EMBED_TEXT_CHARS:
        raise InvalidArgument(f"query is longer than {MAX_EMBED_TEXT_CHARS} characters")
    # A question, not a stored text: a model with a query side (e5) embeds it there.
    vector = await svc.embed_question(who, query) if query and query.strip() else None
    db = svc.db.scoped(ref)
    now = svc.clock()
    wanted = offset + limit
    needles = ns.needles(conditions)
    found: list[NamespacedNote] = []
    # Without a filter one read of ``wanted`` notes answers; with one, pages double, so a
    # ranked read (which orders the whole prefix each time) runs a logarithmic number of times.
    size = max(_PAGE, wanted) if conditions else wanted
    skip, after = 0, ""
    while len(found) < wanted:
        base = {"prefix": prefix, "needles": needles, "now": now, "as_of": now, "limit": size}
        if vector is None:
            rows = await db.read(q.LIST_UNDER_PREFIX, {**base, "after": after})
        else:
            rows = await db.read(q.RANK_UNDER_PREFIX, {**base, "vector": vector, "skip": skip})
        for row in rows:
            note = _note(ref, row, who, vector is not None)
            if note is not None and ns.passes(note.entry.value, conditions):
                found.append(note)
        if len(rows) < size:
            break
        skip, after, size = skip + size, rows[-1]["key"], min(2 * size, _MAX_PAGE)
    return found[offset:wanted]


async def list_namespaces(
    svc: Services,
    who: Principal,
    scope: Scope,
    prefix: Sequence[str] | None,
    suffix: Sequence[str] | None,
    max_depth: int | None,
    limit: int,
    offset: int,
) -> list[tuple[str, ...]]:
    """The distinct namespaces holding live notes that start with ``prefix`` and end with
    ``suffix`` (``*`` matches any one label), cut to ``max_depth`` labels, in label order."""
    ref = resolve_scope(who, scope)
    head = ns.check_labels(prefix or (), "prefix")
    tail = ns.check_labels(suffix or (), "suffix")
    if max_depth is not None and max_depth < 1:
        raise InvalidArgument("maxDepth must be at least 1")
    _check_window(limit, offset)
    now = svc.clock()
    params = {
        "prefix": ns.namespace_prefix(ns.literal_head(head)),
        "needles": [],
        "root": ns.ROOT,
        "separator": ns.SEPARATOR,
        "now": now,
        "as_of": now,
    }
    rows = await svc.db.scoped(ref).read(q.NAMESPACES_UNDER_PREFIX, params)
    seen: set[tuple[str, ...]] = set()
    for row in rows:
        namespace = ns.split_path(row["path"])
        if ns.matches(namespace, head, tail):
            seen.add(namespace[:max_depth] if max_depth else namespace)
    return sorted(seen)[offset : offset + limit]


def _note(ref: ScopeRef, row: Row, who: Principal, ranked: bool) -> NamespacedNote | None:
    parts = ns.split_key(row["key"])
    if parts is None:
        return None
    score = row["score"] if ranked else None
    return NamespacedNote(parts[0], parts[1], _entry(ref, row, who), score)
