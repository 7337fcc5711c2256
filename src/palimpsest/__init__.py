"""Palimpsest: a long-term memory server for AI agents."""

__version__ = "0.1.0"
