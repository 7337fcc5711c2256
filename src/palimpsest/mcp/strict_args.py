"""Tool arguments are parsed once, strictly, as the JSON they arrived as (docs/security.md,
Strict parsing): the same rule GraphQL applies to its variables.

The SDK validates a tool's arguments in pydantic's lax mode, which reads ``true`` as the
integer 1, ``"7"`` as 7 and ``1.0`` as 1, and drops arguments the tool does not take. So every
tool's argument model is replaced after registration (``harden``): unknown arguments are
refused (the published input schema says ``additionalProperties: false``), and the arguments
are validated in pydantic's strict JSON mode, where a boolean is not a number, a string is not
a number and a number is not a string, while an enum still reads from its JSON value. The one
leniency kept (clients rely on it): a list or an object sent as a JSON string, to an argument
that takes a list or an object; an argument that takes text keeps the text as sent, so
``'{"a": 1}'`` is stored as written and ``'null'`` is not read as ``None``. Integers
are bounded to GraphQL's ``Int`` (``Int32``), so a number the other door cannot carry (a
revision past 64 bits) is refused here rather than reaching the database. What fails is an
``INVALID_ARGUMENT`` naming the fields (``server._coded``).
"""

from __future__ import annotations

import json
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import BaseModel, ConfigDict, Field

INT_MIN = -(2**31)
INT_MAX = 2**31 - 1
# GraphQL's Int: what the two doors both carry.
Int32 = Annotated[int, Field(ge=INT_MIN, le=INT_MAX)]


class ToolInput(BaseModel):
    """The base of an object inside a tool's arguments: unknown fields are refused."""

    model_config = ConfigDict(extra="forbid")


class StrictArguments(FuncMetadata):
    """A tool's argument metadata whose validation is strict JSON."""

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` with a list or an object sent as a JSON string parsed, for an argument
        that does not take text. The SDK's own parses every string sent to a field not
        annotated exactly ``str``, so ``str | None`` lost a JSON text and read ``'null'``
        as ``None``."""
        fields = self.arg_model.model_fields
        keys = {f.alias or name: f.annotation for name, f in fields.items()}
        keys.update({name: f.annotation for name, f in fields.items()})
        parsed = dict(data)
        for key, value in data.items():
            if not isinstance(value, str) or key not in keys or takes_text(keys[key]):
                continue
            try:
                loaded = json.loads(value)
            except (ValueError, RecursionError):
                continue  # not JSON: validation refuses the string
            if isinstance(loaded, list | dict):
                parsed[key] = loaded
        return parsed

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        parsed = self.pre_parse_json(arguments_to_validate)
        # json, not orjson: an integer past 64 bits must reach the bounds check, not fail here.
        model = self.arg_model.model_validate_json(json.dumps(parsed), strict=True)
        return model.model_dump_one_level()


def takes_text(annotation: Any) -> bool:
    """Whether a field of this annotation accepts a JSON string as it is."""
    if annotation is Any or annotation is str:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return takes_text(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return any(takes_text(a) for a in get_args(annotation))
    if origin is Literal:
        return any(isinstance(a, str) for a in get_args(annotation))
    # A str enum reads from its JSON string.
    return isinstance(annotation, type) and issubclass(annotation, str)


def harden(tool: Tool) -> None:
    """Make ``tool`` refuse unknown arguments and parse the others strictly."""
    loose = tool.fn_metadata.arg_model
    config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")
    forbidding: type[ArgModelBase] = type(
        loose.__name__, (loose,), {"model_config": config, "__module__": loose.__module__}
    )
    meta = tool.fn_metadata
    tool.fn_metadata = StrictArguments(
        arg_model=forbidding,
        output_schema=meta.output_schema,
        output_model=meta.output_model,
        wrap_output=meta.wrap_output,
    )
    tool.parameters = forbidding.model_json_schema(by_alias=True)
