"""What each tool does to memory, as MCP tool annotations, so a client can ask before a change.

Every tool states all three hints. ``READS`` changes nothing. A write is *destructive* when it
can replace or end what a later read answers (a value, a chunk's text, a fact's validity), even
though history keeps the old version; it is *idempotent* when repeating the same call has no
further effect (a second delete finds nothing; a repeated assertion merges). No tool reaches
outside the memory (``openWorldHint`` false).
"""

from __future__ import annotations

from mcp.types import ToolAnnotations

READS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def writes(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )
