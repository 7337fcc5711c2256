"""The short way in (``cli.shortcut``): each look's options are its typer command's, a plain
command line calls the body with exactly what typer would call it with, and every other
command line is left to typer."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer
from typer.core import TyperArgument, TyperOption
from typer.testing import CliRunner

from palimpsest.cli import looks, shortcut
from palimpsest.cli.registry import app
from palimpsest.cli.shortcut import LOOKS
from palimpsest.identity import Scope

COMMAND = typer.main.get_command(app)
BODIES = ("memory_get", "memory_history", "memory_search", "usage")
SIGNATURES = {name: list(inspect.signature(getattr(looks, name)).parameters) for name in BODIES}


def _typer_command(words: tuple[str, ...]) -> Any:
    command: Any = COMMAND
    for word in words:
        command = command.commands[word]
    return command


def _kind(param: TyperOption) -> str:
    annotation = param.type_descriptor.annotation
    info = param.type_descriptor.parameter_info
    if annotation is Scope:
        return "scope"
    if annotation is int and info.min == 1 and info.max is None and not info.clamp:
        return "count"
    assert annotation is str, (param.name, annotation)
    return "text"


@pytest.mark.parametrize("words", list(LOOKS), ids=" ".join)
def test_each_looks_options_are_its_typer_commands(words: tuple[str, ...]) -> None:
    look = LOOKS[words]
    command = _typer_command(words)
    arguments = [p.name for p in command.params if isinstance(p, TyperArgument)]
    assert list(look.arguments) == arguments
    options = {
        p.opts[0]: p for p in command.params if isinstance(p, TyperOption) and p.opts[0] != "--help"
    }
    assert set(look.options) == set(options)
    for name, option in look.options.items():
        param = options[name]
        assert len(param.opts) == 1
        assert not param.secondary_opts
        assert not param.multiple
        assert not param.envvar
        assert option.param == param.name
        assert option.kind == _kind(param)
        default = param.default.value if isinstance(param.default, Scope) else param.default
        assert option.default == default
    # The body takes exactly the command's parameters.
    assert set(SIGNATURES[look.body]) == {*look.arguments, *(o.param for o in options_of(look))}


def options_of(look: shortcut.Look) -> list[shortcut.Option]:
    return list(look.options.values())


PLAIN = [
    ["memory", "get", "k"],
    ["memory", "get", "a/b c", "--scope", "AGENT"],
    ["memory", "get", "--scope=TENANT", "k", "--as-of", "2020", "--known-at=2021-01-02"],
    ["memory", "get", "", "--as-of="],
    ["memory", "history", "k", "--limit", "5", "--after", "c1"],
    ["memory", "history", "--limit=1", "k"],
    ["memory", "search", "what does the shell say?", "--top-k", "3", "--scope", "USER"],
    ["usage"],
    ["usage", "--scope", "GLOBAL"],
]

LEFT_TO_TYPER = [
    [],
    ["--version"],
    ["--help"],
    ["memory"],
    ["memory", "get"],
    ["memory", "get", "--help"],
    ["memory", "get", "k", "--help"],
    ["memory", "get", "k", "extra"],
    ["memory", "get", "-k"],
    ["memory", "get", "k", "--scope", "user"],
    ["memory", "get", "k", "--scope"],
    ["memory", "get", "k", "--scope", "USER", "--scope", "AGENT"],
    ["memory", "get", "k", "--as-of", "-1"],
    ["memory", "get", "k", "--nope", "x"],
    ["memory", "get", "k", "--"],
    ["memory", "get", "--", "k"],
    ["memory", "history", "k", "--limit", "0"],
    ["memory", "history", "k", "--limit", "07"],
    ["memory", "history", "k", "--limit", " 7"],
    ["memory", "search"],
    ["memory", "set", "k", "1"],
    ["usage", "x"],
    ["context", "q"],
    ["serve"],
    ["bench", "harvest"],
]


def _typers_call(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> tuple[str, dict[str, Any]]:
    called: list[tuple[str, dict[str, Any]]] = []
    for name in BODIES:

        def record(*args: Any, _name: str = name, **kwargs: Any) -> int:
            called.append((_name, {"args": args, **kwargs}))
            return 0

        monkeypatch.setattr(looks, name, record)
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    [call] = called
    return call


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_a_plain_command_line_calls_the_body_as_typer_does(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed = shortcut.parse(argv)
    assert parsed is not None
    look, arguments = parsed
    name, typers = _typers_call(argv, monkeypatch)
    assert look.body == name
    # typer's command passes them by position, in the body's order.
    args = typers.pop("args")
    assert arguments == {**dict(zip(SIGNATURES[name], args, strict=False)), **typers}


@pytest.mark.parametrize("argv", LEFT_TO_TYPER, ids=lambda a: " ".join(a) or "(none)")
def test_any_other_command_line_is_left_to_typer(argv: list[str]) -> None:
    assert shortcut.parse(argv) is None
    assert shortcut.run(argv) is None
