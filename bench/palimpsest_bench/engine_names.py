"""The full-text engines a bench compares (``--engines procedure,cypher``), as named on its
command line; what each is: ``palimpsest.cypher.extension``."""

from __future__ import annotations

from palimpsest.cypher.extension import Engine

ENGINES: tuple[Engine, ...] = ("procedure", "cypher")


def parse_engines(text: str) -> tuple[Engine, ...]:
    """``"procedure,cypher"`` -> ``("procedure", "cypher")``: known names, each once, two
    or more (a comparison needs a second engine), in the order given."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in ENGINES]
    if unknown:
        raise ValueError(f"unknown engine(s) {unknown}: choose from {list(ENGINES)}")
    if len(set(names)) != len(names) or len(names) < 2:
        raise ValueError("name two engines, each once (procedure,cypher)")
    return tuple(e for n in names for e in ENGINES if e == n)
