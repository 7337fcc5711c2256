"""Tool arguments are parsed once, strictly, as the JSON they arrived as (docs/security.md,
Strict parsing): the same rule GraphQL applies to its variables.

The SDK validates a tool's arguments in pydantic's lax mode, which reads ``true`` as the
integer 1, ``"7"`` as 7 and ``1.0`` as 1, and drops arguments the tool does not take. So every
tool's argument model is replaced after registration (``harden``): unknown arguments are
refused (the published input schema says ``additionalProperties: false``), and the arguments
are validated in pydantic's strict JSON mode, where a boolean is not a number, a string is not
a number and a number is not a string, while an enum still reads from its JSON value. Integers
are bounded to GraphQL's ``Int`` (``Int32``), so a number the other door cannot carry (a
revision past 64 bits) is refused here rather than reaching the database. What fails is an
``INVALID_ARGUMENT`` naming the fields (``server._coded``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

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

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        # pre_parse_json keeps the SDK's one leniency that clients rely on: a list or an
        # object sent as a JSON string.
        parsed = self.pre_parse_json(arguments_to_validate)
        # json, not orjson: an integer past 64 bits must reach the bounds check, not fail here.
        model = self.arg_model.model_validate_json(json.dumps(parsed), strict=True)
        return model.model_dump_one_level()


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
