"""The SQL Memory interface's names: ``SqlStatement`` (apart from cypher's ``Statement``),
and its old name kept for one release with a deprecation warning."""

from __future__ import annotations

import pytest

from palimpsest import sqlmem
from palimpsest.cypher.driver.executor import Statement as CypherStatement
from palimpsest.sqlmem.core import base


def test_a_statement_is_its_text_and_its_arguments() -> None:
    s = sqlmem.SqlStatement("INSERT INTO t VALUES (?)", [1])
    assert (s.sql, s.args) == ("INSERT INTO t VALUES (?)", [1])
    assert sqlmem.SqlStatement("SELECT 1").args is None
    assert sqlmem.SqlStatement.__name__ != CypherStatement.__name__  # the clash the name ends


@pytest.mark.parametrize("module", [sqlmem, base])
def test_the_old_name_is_the_same_class_and_warns(module: object) -> None:
    with pytest.warns(DeprecationWarning, match="use palimpsest.sqlmem.SqlStatement"):
        old = module.Statement  # type: ignore[attr-defined]
    assert old is sqlmem.SqlStatement


def test_the_face_lists_the_new_name_only() -> None:
    assert "SqlStatement" in sqlmem.__all__
    assert "Statement" not in sqlmem.__all__
    with pytest.raises(AttributeError):
        sqlmem.NoSuchName  # noqa: B018
