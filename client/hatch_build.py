"""The client wheel's files, which live in ../src beside the server's: forced into a built
wheel, left out of an editable one (whose .pth already reaches them, and where copies in
site-packages would shadow the rest of the `palimpsest` package)."""

from __future__ import annotations

from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class ClientFiles(BuildHookInterface):
    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if version == "standard":
            build_data.setdefault("force_include", {}).update(self.config["ships"])
