"""The CLI's coercion (``cli.coercion``): every value it answers itself, it answers as typer's
own pydantic coercion does; every other value, and every error, is typer's own."""

from __future__ import annotations

import subprocess
import sys
from enum import Enum, StrEnum
from pathlib import Path
from typing import Annotated, Any

import pytest
import typer
from typer._click import Context
from typer._click.exceptions import BadParameter
from typer.core import _TyperParameter

from palimpsest.cli import coercion
from palimpsest.cli.coercion import QuickRuntimeParam, quick_value
from palimpsest.identity import Scope


class Mode(StrEnum):
    FAST = "fast"
    SLOW = "Slow"


class Level(Enum):
    LOW = 1
    HIGH = 2


def _command(
    text: str,
    maybe: Annotated[str | None, typer.Option()] = None,
    flag: bool = False,
    count: Annotated[int, typer.Option(min=1, max=100)] = 10,
    free: int = 3,
    clamped: Annotated[int, typer.Option(min=0, max=5, clamp=True)] = 0,
    scope: Scope = Scope.USER,
    mode: Annotated[Mode, typer.Option(case_sensitive=False)] = Mode.FAST,
    level: Level = Level.LOW,
    ratio: float = 0.5,
    path: Path = Path("."),
    many: Annotated[list[int] | None, typer.Option()] = None,
) -> None:
    """A command with one parameter of each kind the CLI uses."""


_app = typer.Typer()
_app.command()(_command)
COMMAND = typer.main.get_command(_app)
PARAMS = {p.name or "": p for p in COMMAND.params if isinstance(p, _TyperParameter)}
CTX = Context(COMMAND)

# Spellings pydantic's lax int reads: only the plain ones are the quick coercion's.
_COUNTS = ["1", "100", "0", "101", "10", "-3", " 7", "7 ", "+7", "007", "1_0", "7.0"]
VALUES: dict[str, list[Any]] = {
    "text": ["k", "", " spaced ", "ünïcode", "\udcff", "-dash", b"bytes", 7],
    "maybe": ["2020", None, ""],
    "flag": [True, False, "true", "no", "", 1],
    "count": [*_COUNTS, "x", "", 10, 0, 1.0, True, "9" * 30],
    "free": ["-0", "-12", "123456789012345678", "1234567890123456789", 3, "3.5"],
    "clamped": ["9", "-1", "3", 4],
    "scope": ["USER", "user", "AGENT", "GLOBAL", "nobody", Scope.TENANT, "", 1],
    "mode": [
        "fast",
        "FAST",
        "slow",
        "SLOW",
        "Slow",
        "\u017flow",  # long s: casefolds to "slow"
        "quick",
        Mode.SLOW,
    ],
    "level": ["1", "2", "3", Level.HIGH, 1, "LOW"],
    "ratio": ["0.5", "1", "x", 0.25],
    "path": ["a/b", ".", Path("x")],
    "many": [["1", "2"], [], ["x"]],
}


def _outcome(run: Any) -> tuple[str, Any]:
    try:
        value = run()
    except BadParameter as e:
        return "error", e.format_message()
    return type(value).__name__, value


@pytest.mark.parametrize(
    ("name", "value"), [(n, v) for n, values in VALUES.items() for v in values]
)
def test_each_value_coerces_exactly_as_typers_own_coercion(name: str, value: Any) -> None:
    param = PARAMS[name]
    quick = param.get_runtime_param()
    assert isinstance(quick, QuickRuntimeParam)
    typers = coercion._TYPERS_BUILD(param.type_descriptor)
    assert not isinstance(typers, QuickRuntimeParam)
    got = _outcome(lambda: quick.coerce(value, param=param, ctx=CTX))
    want = _outcome(lambda: typers.coerce(value, param=param, ctx=CTX))
    assert got == want


def test_the_plain_values_are_answered_without_typers_coercion() -> None:
    answered = {
        ("text", "k"): "k",
        ("count", "100"): 100,
        ("free", "-12"): -12,
        ("count", 10): 10,
        ("flag", True): True,
        ("scope", "USER"): Scope.USER,
        ("scope", Scope.TENANT): Scope.TENANT,
        ("mode", "SLOW"): Mode.SLOW,
        ("level", "2"): Level.HIGH,
    }
    for (name, value), want in answered.items():
        assert quick_value(PARAMS[name].type_descriptor, value, CTX) is want or (
            quick_value(PARAMS[name].type_descriptor, value, CTX) == want
        ), (name, value)
    unanswered = [("count", "0"), ("count", " 7"), ("count", "1_0"), ("scope", "user"),
                  ("clamped", "3"), ("ratio", "0.5"), ("path", "a"), ("text", b"bytes"),
                  ("flag", "true"), ("mode", "quick")]  # fmt: skip
    for name, value in unanswered:
        got = quick_value(PARAMS[name].type_descriptor, value, CTX)
        assert got is coercion._UNANSWERED, (name, value)


def test_install_is_what_typers_parameters_use() -> None:
    assert typer.core.build_runtime_param is coercion._build  # type: ignore[attr-defined]
    assert isinstance(PARAMS["count"].get_runtime_param(), QuickRuntimeParam)


def test_a_quick_look_with_plain_values_never_imports_pydantic() -> None:
    probe = (
        "import sys; sys.argv[0] = 'palimpsest'\n"
        "from palimpsest.cli import main\n"
        "try:\n    main()\n"
        "except SystemExit:\n    pass\n"
        "print('pydantic' in sys.modules, 'typer' in sys.modules)\n"
    )
    env = {"PALIMPSEST_SERVER_URL": "http://127.0.0.1:9", "PALIMPSEST_RUN_TOKEN": "t"}
    # A look the short way in (cli/shortcut.py) does not take: typer parses it.
    argv = ["memory", "set", "k", "1", "--scope", "AGENT", "--ttl", "5", "--no-embed"]
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv],
        capture_output=True,
        text=True,
        env={**_environ(), **env},
        check=False,
    )
    assert done.stdout.split() == ["False", "True"], done.stderr
    # The arguments were taken: the look got as far as the refused address.
    assert "cannot reach the Palimpsest server" in done.stderr


def _environ() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("PALIMPSEST_")}
