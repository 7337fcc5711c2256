"""Every named statement, and the same statement to be planned and not run (``EXPLAIN``).

Start-up's warm-up (``palimpsest.warmup``) plans each statement once before the server says
it is ready: a statement the database cannot plan fails there, not on a caller's request, and
Neo4j's planner has run once. An ``EXPLAIN`` reads and writes no row, so a scoped statement is
planned without a scope and touches no tenant's data.
"""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil

import palimpsest.cypher
from palimpsest.cypher.driver.executor import SchemaStatement, Statement


def named_statements() -> list[Statement]:
    """Every ``Statement`` constant of the ``cypher`` modules (alone or in a tuple), by name,
    except schema DDL, which start-up has just run for real."""
    found: dict[str, Statement] = {}
    for info in pkgutil.walk_packages(palimpsest.cypher.__path__, "palimpsest.cypher."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            group = value if isinstance(value, tuple) else (value,)
            for s in group:
                if isinstance(s, Statement) and not isinstance(s, SchemaStatement):
                    found[s.name] = s
    return [found[name] for name in sorted(found)]


def explained(statement: Statement) -> Statement:
    """The same statement (name, kind, text) behind ``EXPLAIN``; after a ``CYPHER 25``
    prefix, which must stay first."""
    text = statement.text.strip()
    if text.startswith("CYPHER 25"):
        planned = text.replace("CYPHER 25", "CYPHER 25 EXPLAIN", 1)
    else:
        planned = "EXPLAIN " + text
    return dataclasses.replace(statement, text=planned)
