"""Documents: import, read, edit, revisions, sources and memory as files.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.documents.catalog import (
    MAX_LIST_LIMIT,
    delete_document,
    export_markdown,
    get_chunk,
    get_document,
    list_documents,
    update_chunk,
)
from palimpsest.resolvers.documents.importing import (
    MAX_BATCH_BYTES,
    DocumentDraft,
    import_document,
    import_documents,
)
from palimpsest.resolvers.documents.memory_files import MemoryAnswer, MemoryCommand, run
from palimpsest.resolvers.documents.revisions import (
    MAX_HISTORY_LIMIT,
    DocumentRevision,
    diff,
    export,
    history,
    restore,
)

__all__ = [
    "MAX_BATCH_BYTES",
    "MAX_HISTORY_LIMIT",
    "MAX_LIST_LIMIT",
    "DocumentDraft",
    "DocumentRevision",
    "MemoryAnswer",
    "MemoryCommand",
    "delete_document",
    "diff",
    "export",
    "export_markdown",
    "get_chunk",
    "get_document",
    "history",
    "import_document",
    "import_documents",
    "list_documents",
    "restore",
    "run",
    "update_chunk",
]
