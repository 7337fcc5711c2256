"""The statements start-up plans, and how each is sent to be planned and not run."""

from __future__ import annotations

from palimpsest.cypher.driver.executor import CrossScopeStatement, SchemaStatement, Statement
from palimpsest.cypher.plans import explained, named_statements
from tests.unit.cypher.test_statements import all_statements


def test_named_statements_are_every_statement_but_the_schema_ddl() -> None:
    names = [s.name for s in named_statements()]
    assert len(names) == len(set(names))
    expected = {s.name for _, s in all_statements() if not isinstance(s, SchemaStatement)}
    assert set(names) == expected
    assert "LOAD_HITS" in names
    assert "AWAIT_BOOKMARKS" in names  # the cross-scope ones too


def test_explained_puts_explain_first_or_after_the_language_version() -> None:
    plain = Statement("PROBE_PLAIN", "\nMATCH (m:Memory {scope_key: $scope_key}) RETURN m\n")
    versioned = Statement("PROBE_25", "CYPHER 25\nMATCH (c:Chunk {scope_key: $scope_key}) RETURN c")
    assert explained(plain).text == "EXPLAIN MATCH (m:Memory {scope_key: $scope_key}) RETURN m"
    assert explained(versioned).text.startswith("CYPHER 25 EXPLAIN\nMATCH (c:Chunk")
    # The same name and kind: it runs through the same handle, and a slot's text applies.
    assert explained(plain).name == "PROBE_PLAIN"
    cross = CrossScopeStatement("PROBE_CROSS", "RETURN 1 AS one")
    assert isinstance(explained(cross), CrossScopeStatement)
    assert explained(plain).scoped
