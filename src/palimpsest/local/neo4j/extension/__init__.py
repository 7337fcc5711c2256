"""Palimpsest's Neo4j extension: the ``palimpsest.*`` procedures, built at install.

The Java source lives beside this module (``java/``); ``build`` compiles it with the Eclipse
compiler (ECJ, a jar on Maven Central pinned by sha256) on the Java that runs the managed server,
against the server's own jars, and drops the jar into its ``plugins/``. See
docs/decisions/0010-neo4j-extension.md.
"""

from palimpsest.cypher.extension import VERSION
from palimpsest.local.neo4j.extension.builder import ECJ, JAR_PREFIX, build, jar_path

__all__ = ["ECJ", "JAR_PREFIX", "VERSION", "build", "jar_path"]
