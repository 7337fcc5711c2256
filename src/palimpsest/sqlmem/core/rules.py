"""Defence layer 1's tables, the same on both backends: what a statement may be.

Each backend's validator (``sqlite/validator.py``, ``postgres/validator.py``) parses in its
own dialect and adds its own refusals; what counts as a query, a write, an allowed object
kind and the checked statements' cache are written here once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from enum import StrEnum
from typing import TypeVar

from sqlglot import exp

from palimpsest.errors import InvalidArgument

T = TypeVar("T")

MAX_STATEMENT_CHARS = 100_000
CACHE_CHARS = 4096  # longer statements are checked every time, not cached
CACHE_SIZE = 1024


class Kind(StrEnum):
    """What an accepted statement is; ``exec`` reports a row id only for inserts."""

    SELECT = "select"
    INSERT = "insert"
    UPDATE = "update"
    DELETE = "delete"
    CREATE = "create"
    DROP = "drop"
    ALTER = "alter"


# Nodes that change data or schema; a query may contain none of them anywhere in its tree.
WRITES = (exp.Insert, exp.Update, exp.Delete, exp.Create, exp.Drop, exp.Alter, exp.Merge)
# What CREATE and DROP may name.
OBJECT_KINDS = frozenset({"TABLE", "INDEX", "VIEW"})
EXEC_ROOTS: dict[type[exp.Expr], Kind] = {
    exp.Insert: Kind.INSERT,
    exp.Update: Kind.UPDATE,
    exp.Delete: Kind.DELETE,
    exp.Create: Kind.CREATE,
    exp.Drop: Kind.DROP,
    exp.Alter: Kind.ALTER,
}
QUERY_ROOTS = (exp.Select, exp.Union, exp.Intersect, exp.Except)


def drops_column(tree: exp.Expr, node: exp.Expr) -> bool:
    """ALTER TABLE ... DROP COLUMN is parsed as a Drop inside the Alter; it is allowed."""
    return (
        isinstance(tree, exp.Alter)
        and isinstance(node, exp.Drop)
        and node.parent is tree
        and str(node.args.get("kind") or "").upper() == "COLUMN"
    )


def refused(reason: str) -> InvalidArgument:
    return InvalidArgument(f"statement refused: {reason}", reason=reason)


def cached(check: Callable[[str], T]) -> Callable[[str], T]:
    """``check`` with its verdicts on short statements remembered (a refusal is not cached)."""
    memo = functools.lru_cache(maxsize=CACHE_SIZE)(check)

    def run(sql: str) -> T:
        return memo(sql) if len(sql) <= CACHE_CHARS else check(sql)

    return run
