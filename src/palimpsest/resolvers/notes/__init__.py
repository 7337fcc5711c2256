"""Notes: the key/value plane, its versions and namespaced search.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.notes.keyvalue import (
    append_dedupe,
    bounded_list,
    delete,
    get,
    increment,
    list_entries,
    merge,
    set_value,
)
from palimpsest.resolvers.notes.namespaced import list_namespaces, search
from palimpsest.resolvers.notes.versions import MAX_HISTORY_LIMIT, history

__all__ = [
    "MAX_HISTORY_LIMIT",
    "append_dedupe",
    "bounded_list",
    "delete",
    "get",
    "history",
    "increment",
    "list_entries",
    "list_namespaces",
    "merge",
    "search",
    "set_value",
]
