"""Palimpsest as an MCP server: ``palimpsest mcp`` (stdio) and ``/mcp`` on the API server."""

from palimpsest.mcp.server import build_server
from palimpsest.mcp.transports import PATH, http_endpoint, run_stdio

__all__ = ["PATH", "build_server", "http_endpoint", "run_stdio"]
