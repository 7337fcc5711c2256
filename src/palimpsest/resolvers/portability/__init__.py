"""Export and import of a person's memory.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.portability.export import FORMAT, VERSION, export_lines, export_me
from palimpsest.resolvers.portability.importer import check_export, import_file

__all__ = [
    "FORMAT",
    "VERSION",
    "check_export",
    "export_lines",
    "export_me",
    "import_file",
]
