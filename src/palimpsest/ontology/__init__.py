"""The tenant ontology: which entity types exist and which scope their facts belong in.

Pure parsing and validation; nothing here touches the database. By role:

- ``model``: the ontology in force (``Ontology``, ``EntityType``, ``OntologyStatus``);
- ``from_markdown``: ``parse_ontology``, the Markdown form (its docstring gives the format);
- ``from_data``: ``ontology_from_dict``, the same from plain data (the GraphQL input);
- ``build``: the checks and the ``extends`` resolution both forms share;
- ``placement``: the per-fact decision of docs/spec.md, Placement, from an ``Ontology``;
- ``predicates``: the ``single:`` and ``same:`` cardinality lines;
- ``reconcile``: the closure of single-valued facts;
- ``extractors``: what the consolidator draws from a span besides its chunk (the
  ``Extractor`` protocol, the built-ins, entry-point loading).
"""

from palimpsest.ontology.from_data import ontology_from_dict
from palimpsest.ontology.from_markdown import parse_ontology
from palimpsest.ontology.model import EntityType, Ontology, OntologyStatus

__all__ = ["EntityType", "Ontology", "OntologyStatus", "ontology_from_dict", "parse_ontology"]
