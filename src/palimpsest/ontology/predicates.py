"""Predicate cardinality lines of the ontology (``single:``, ``same:``): parsing, no I/O.

A ``single:`` line lists predicates a type's subjects hold one value of at a time; a ``same:``
line names spellings of one predicate, the first being the canonical one. Both are compared
after ``normalise``. ``ontology/build.py`` attaches them to types and resolves
inheritance.
"""

from __future__ import annotations

from palimpsest.domain.names import normalise
from palimpsest.errors import InvalidArgument

MAX_PREDICATE_CHARS = 300


def check_same(same: list[tuple[str, str, str]], type_name: str) -> None:
    """One type's ``same:`` groups must not overlap: each spelling names one predicate."""
    canon: dict[str, str] = {}
    for alias, canonical, where in same:
        if canon.get(alias, canonical) != canonical or alias in canon.values():
            raise InvalidArgument(
                f"{where}: predicate {alias!r} is already a spelling of another predicate "
                f"in type {type_name!r}"
            )
        if canonical in canon:
            raise InvalidArgument(
                f"{where}: predicate {canonical!r} is already an alias in type {type_name!r}"
            )
        canon[alias] = canonical


def single_line(value: str, where: str) -> list[str]:
    """The predicates of a ``single:`` line, normalised; an empty one is refused."""
    parts = value.split(",")
    names = [normalise(p) for p in parts]
    if not any(names) or (len(parts) > 1 and not all(names)):
        raise InvalidArgument(f"{where}: `single:` needs predicates separated by commas")
    for name in names:
        if len(name) > MAX_PREDICATE_CHARS:
            raise InvalidArgument(
                f"{where}: a predicate is longer than {MAX_PREDICATE_CHARS} characters"
            )
    return names


def same_line(value: str, where: str) -> list[tuple[str, str, str]]:
    """``canonical = alias [= alias ...]`` as (alias, canonical, where) triples."""
    names = [normalise(p) for p in value.split("=")]
    if len(names) < 2 or not all(names):
        raise InvalidArgument(
            f"{where}: `same:` needs two or more predicates separated by '=', "
            "as in `same: lives in = resides in`"
        )
    if len(set(names)) != len(names):
        raise InvalidArgument(f"{where}: `same:` names one predicate twice")
    for name in names:
        if len(name) > MAX_PREDICATE_CHARS:
            raise InvalidArgument(
                f"{where}: a predicate is longer than {MAX_PREDICATE_CHARS} characters"
            )
    return [(alias, names[0], where) for alias in names[1:]]
