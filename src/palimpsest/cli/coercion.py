"""Typer's coercion of command-line values, without pydantic for the plain values.

typer 0.29 turns every parameter's value (an argument, an option, a default) into its
annotated type through a pydantic ``TypeAdapter``, so any command given a value imports
pydantic, a large part of a quick look's start-up (docs/notes/distributions.md). Our
commands' values are almost all strings, booleans, integers and enum members, whose coercion
needs no pydantic. ``install()`` puts a coercion in front of typer's own that answers those
and hands everything else to typer, unchanged:

- a string for a ``str``, a bool for a ``bool``, an integer for an ``int`` within its bounds,
  a member for an ``Enum``: returned as is;
- a plain decimal (``-?(0|[1-9][0-9]*)``, at most 18 digits) for an ``int`` within its
  ``min``/``max``: its value;
- a choice's text, compared as typer compares it (the value's text, casefolded unless the
  option is case-sensitive): its member.

Anything else (a path, a float, a list, another spelling such as ``" 7"`` or ``"1_0"``, a
value out of bounds, a choice that matches nothing, a custom ``parser``, a context with a
token normaliser) goes to typer's own coercion, built on first need, so every result and
every error message is typer's. The answers above are the ones typer's would give:
``tests/unit/cli/test_coercion.py`` compares the two.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import TYPE_CHECKING, Any

import typer.core
from typer import _coercion

if TYPE_CHECKING:
    from typer._click import Context
    from typer._coercion import RuntimeParam, TypeDescriptor
    from typer.core import _TyperParameter

__all__ = ["QuickRuntimeParam", "install", "quick_value"]

# What pydantic's lax ``int`` reads from a string, kept to one spelling per number; 18
# digits stay far inside the range where int() and pydantic agree.
_DECIMAL = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_UNANSWERED = object()


def quick_value(descriptor: TypeDescriptor, value: Any, ctx: Context | None) -> Any:
    """The coerced value when the plain rules answer it, else ``_UNANSWERED``."""
    info = descriptor.parameter_info
    annotation = descriptor.annotation
    if info.parser is not None or descriptor.is_file:
        return _UNANSWERED
    if annotation is str:
        return value if type(value) is str else _UNANSWERED
    if annotation is bool:
        return value if type(value) is bool else _UNANSWERED
    if annotation is int:
        if info.clamp:
            return _UNANSWERED
        if type(value) is str and _DECIMAL.fullmatch(value):
            number = int(value)
        elif type(value) is int:
            number = value
        else:
            return _UNANSWERED
        if (info.min is not None and number < info.min) or (
            info.max is not None and number > info.max
        ):
            return _UNANSWERED
        return number
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return _choice(annotation, value, info.case_sensitive, ctx)
    return _UNANSWERED


def _choice(enum: type[Enum], value: Any, case_sensitive: bool, ctx: Context | None) -> Any:
    if isinstance(value, enum) and any(value is member for member in enum):
        return value
    if type(value) is not str or (ctx is not None and ctx.token_normalize_func is not None):
        return _UNANSWERED
    wanted = value if case_sensitive else value.casefold()
    for member in enum:
        text = str(member.value)
        if (text if case_sensitive else text.casefold()) == wanted:
            return member
    return _UNANSWERED  # typer's own names the choices in its error


class QuickRuntimeParam(_coercion.RuntimeParam):
    """Answers the plain values itself; typer's own coercion answers the rest."""

    def __init__(self, descriptor: TypeDescriptor) -> None:
        super().__init__(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation)
        object.__setattr__(self, "descriptor", descriptor)
        object.__setattr__(self, "_typers", None)

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
        found = quick_value(self.descriptor, value, ctx)
        if found is not _UNANSWERED:
            return found
        return self.typers()._coerce_value(value, param=param, ctx=ctx)

    def typers(self) -> RuntimeParam:
        """typer's own coercion for this parameter (pydantic's adapter), built once."""
        built = self._typers
        if built is None:
            built = _TYPERS_BUILD(self.descriptor)
            object.__setattr__(self, "_typers", built)
        return built

    descriptor: TypeDescriptor
    _typers: RuntimeParam | None


_TYPERS_BUILD = _coercion.build_runtime_param


def _build(descriptor: TypeDescriptor) -> RuntimeParam:
    if descriptor.is_file:
        return _TYPERS_BUILD(descriptor)
    return QuickRuntimeParam(descriptor)


def install() -> None:
    """Make typer's parameters coerce through ``QuickRuntimeParam`` (idempotent)."""
    typer.core.build_runtime_param = _build  # type: ignore[attr-defined]
