"""The short way in: the common reading looks run without typer.

Loading typer and building the whole command (every module's commands, their parameters'
annotations) is most of a quick look's start-up (docs/notes/distributions.md). The
looks an agent or a person runs most (``memory get``, ``memory history``, ``memory search``,
``usage``) are read here from the command line when it has one of their plain forms, and run
the same bodies as their typer commands (``cli/looks.py``).

Plain means: the command's words first; then its arguments, each once, and its options as
``--name value`` or ``--name=value``, each at most once, in any order; every value one that
typer would take as it is (a scope's exact name, a decimal integer within the option's
bounds, any text that does not start with ``-``). Anything else (``--help``, an unknown or
repeated option, a missing or odd value, shell completion) returns None, and the caller
hands the command line to typer, whose parsing, help and errors are then exactly as before.
``tests/unit/cli/test_shortcut.py`` checks that each look's options here are its typer
command's, with the same defaults and bounds.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from palimpsest.cli import looks

__all__ = ["LOOKS", "Look", "Option", "parse", "run"]

SCOPES = frozenset({"AGENT", "USER", "TENANT", "GLOBAL"})
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")  # as cli/coercion.py answers it


@dataclass(frozen=True, slots=True)
class Option:
    """One option: the body's parameter it sets, its kind, and its default."""

    param: str
    kind: str  # "text", "scope" or "count" (an integer of at least 1)
    default: Any


@dataclass(frozen=True, slots=True)
class Look:
    body: str  # the name of its body in ``cli/looks.py``
    arguments: Sequence[str]
    options: Mapping[str, Option] = field(default_factory=dict)


_SCOPE = Option("scope", "scope", "USER")
LOOKS: Mapping[tuple[str, ...], Look] = {
    ("memory", "get"): Look(
        "memory_get",
        ["key"],
        {
            "--scope": _SCOPE,
            "--as-of": Option("as_of", "text", None),
            "--known-at": Option("known_at", "text", None),
        },
    ),
    ("memory", "history"): Look(
        "memory_history",
        ["key"],
        {
            "--scope": _SCOPE,
            "--limit": Option("limit", "count", 100),
            "--after": Option("after", "text", None),
        },
    ),
    ("memory", "search"): Look(
        "memory_search",
        ["query"],
        {"--scope": _SCOPE, "--top-k": Option("top_k", "count", 10)},
    ),
    ("usage",): Look("usage", [], {"--scope": _SCOPE}),
}


def parse(argv: Sequence[str]) -> tuple[Look, dict[str, Any]] | None:
    """The look and its body's arguments, when ``argv`` is one of the plain forms."""
    for words, look in LOOKS.items():
        if tuple(argv[: len(words)]) == words:
            return _arguments(look, argv[len(words) :])
    return None


def _arguments(look: Look, rest: Sequence[str]) -> tuple[Look, dict[str, Any]] | None:
    given: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(rest):
        token = rest[i]
        i += 1
        if not token.startswith("-"):
            positional.append(token)
            continue
        name, eq, value = token.partition("=")
        if not eq:
            if i == len(rest):
                return None
            value = rest[i]
            i += 1
        option = look.options.get(name)
        if option is None or option.param in given or value.startswith("-"):
            return None
        taken = _value(option.kind, value)
        if taken is None:
            return None
        given[option.param] = taken
    if len(positional) != len(look.arguments):
        return None
    values = {o.param: o.default for o in look.options.values()}
    return look, {**values, **dict(zip(look.arguments, positional, strict=True)), **given}


def _value(kind: str, text: str) -> Any:
    if kind == "text":
        return text
    if kind == "scope":
        return text if text in SCOPES else None
    if _DECIMAL.fullmatch(text) and int(text) >= 1:  # "count"
        return int(text)
    return None


def run(argv: Sequence[str]) -> int | None:
    """Run the look ``argv`` names in a plain form: its exit code; None when it is not one
    (typer takes it then). Failures end as typer's command would end them."""
    if "_PALIMPSEST_COMPLETE" in os.environ:  # shell completion is typer's
        return None
    parsed = parse(argv)
    if parsed is None:
        return None
    look, arguments = parsed
    from palimpsest.cli.failures import expected_failure

    try:
        body: Callable[..., int] = getattr(looks, look.body)
        return body(**arguments)
    except KeyboardInterrupt:
        return 130  # as typer: the interrupted command exits 130, silently
    except Exception as e:
        if isinstance(e, OSError) and e.errno == errno.EPIPE:
            # The reader went away (``| head``): as typer, exit 1 without a word.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            return 1
        message = expected_failure(e)
        if message is None:
            raise
        looks.err(f"palimpsest: {message}")
        return 1
