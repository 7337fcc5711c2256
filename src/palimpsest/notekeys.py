"""How a namespace (a tuple of labels) and a name map onto one note key, and the server's
limit on a note's embedding text: the wire facts the LangGraph store and the server share.

They ship in the client distribution so the store needs nothing of the server's
(``palimpsest.domain.notes.namespaces`` and ``palimpsest.domain.notes.values`` re-export
them; the grammar is described there).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ROOT = "ns/"
SEPARATOR = "//"  # between the namespace and the name
_ESCAPED = re.compile(r"[%/\x00-\x1f\x7f]")

# The model reads ~256 tokens; the rest would only cost CPU and index space.
MAX_EMBED_TEXT_CHARS = 8192


def escape(text: str) -> str:
    return _ESCAPED.sub(lambda m: f"%{ord(m.group()):02X}", text)


def namespace_prefix(labels: Sequence[str]) -> str:
    """The key prefix of every note in ``labels`` or below it (labels without wildcards)."""
    return ROOT + "".join(escape(label) + "/" for label in labels)


def note_key(namespace: Sequence[str], name: str) -> str:
    return namespace_prefix(namespace)[:-1] + SEPARATOR + escape(name)
