"""The bodies of the quick looks that read (``memory get``, ``memory history``, ``memory
search``, ``usage``), without typer: the typer commands (``cli/people.py``) and the short way
in (``cli/shortcut.py``) both call them, so a look prints the same whichever parsed it.

Each takes plain values (the scope by its name) and returns the exit code: 0, or 1 when the
look found nothing it was asked for. Failures raise, for the caller's one-line report.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.table import Table

    from palimpsest.client.recall_results import RecallHit

__all__ = [
    "err",
    "hits_table",
    "memory_get",
    "memory_history",
    "memory_search",
    "print_json",
    "usage",
]


def err(message: str) -> None:
    """Progress and notices go to stderr, so stdout stays machine-readable."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def print_json(result: object) -> None:
    import orjson

    sys.stdout.write(orjson.dumps(result).decode() + "\n")


def _plain(value: object) -> Any:
    from palimpsest.domain.notes.values import plain

    return plain(value)


def memory_get(key: str, scope: str, as_of: str | None, known_at: str | None) -> int:
    from palimpsest.cli.quick import client

    with client() as c:
        entry = c.memory(scope, key, as_of=as_of, known_at=known_at)
    if entry is None:
        err(f"no entry {key!r} in {scope}")
        return 1
    print_json(entry.value)
    return 0


def memory_history(key: str, scope: str, limit: int, after: str | None) -> int:
    from palimpsest.cli.quick import client

    with client() as c:
        found = c.memory_history(scope, key, limit=limit, after=after)
    if found.has_more and found.cursor:
        err(f"more: --after {found.cursor}")
    print_json([_plain(v) for v in found.items])
    return 0


def memory_search(query: str, scope: str, top_k: int) -> int:
    from rich.console import Console

    from palimpsest.cli.quick import client

    with client() as c:
        result = c.search(scope, query, top_k=top_k)
    Console(file=sys.stderr).print(hits_table(result.hits))
    print_json([{**_plain(h), "kind": h.kind.value.lower()} for h in result.hits])
    return 0


def usage(scope: str) -> int:
    from palimpsest.cli.quick import client

    with client() as c:
        found = c.usage(scope)
    print_json(
        {
            "scope": found.scope.value,
            "planes": {
                p.plane: {"used": p.used, "limit": p.limit, "setting": p.setting}
                for p in found.planes
            },
        }
    )
    return 0


def hits_table(hits: Sequence[RecallHit]) -> Table:
    """The hits with what tells a good one from a bad one: the fused score only orders them
    (every score is near 1/(k + rank)), the cosine and each leg's rank say how well it
    matched."""
    from rich.table import Table

    table = Table("score", "cosine", "vector #", "full-text #", "kind", "key / document", "text")
    for h in hits:
        where = h.key or h.document_id or (h.fact.id if h.fact else h.id)
        table.add_row(
            f"{h.score:.4f}",
            "-" if h.cosine is None else f"{h.cosine:.3f}",
            _rank(h.vector_rank),
            _rank(h.fulltext_rank),
            h.kind.value.lower(),
            where,
            _short(h.text),
        )
    return table


def _rank(rank: int | None) -> str:
    return "-" if rank is None else str(rank)


def _short(text: str, width: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"
