"""Layer 1 on PostgreSQL on its own (``sqlmem.postgres.validator``): what it refuses and why,
and how an accepted statement's ``?`` and ``:name`` parameters become ``$n``. Pure: no
PostgreSQL is needed, so `make check` runs it."""

from __future__ import annotations

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.sqlmem.core.rules import MAX_STATEMENT_CHARS, Kind
from palimpsest.sqlmem.postgres.validator import (
    MAX_LIKE_PATTERN_CHARS,
    check_exec,
    check_query,
)

# Each statement and the reason its refusal names (sqlQuery's check).
QUERY_REFUSALS = [
    ("SELECT * FROM t FOR UPDATE", "SELECT ... FOR UPDATE/SHARE is not allowed"),
    ("SELECT a INTO b FROM t", "SELECT ... INTO is not allowed"),
    ("SELECT pg_read_file('x')", "function pg_read_file() is not allowed"),
    ("SELECT myschema.f(1)", "functions of another schema are not allowed"),
    ("SELECT * FROM pg_class", "the system catalogs (pg_*) are not readable"),
    ("SELECT * FROM other.t", "only the scope's own tables (unqualified) and information_schema"),
    ("SELECT * FROM c.s.t", "only the scope's own tables can be named"),
    ("SELECT 'x'::regclass", "the reg* types (catalog lookups) are not allowed"),
    ("SELECT CAST(1 AS public.mytype)", "schema-qualified types are not allowed"),
    ("SELECT nextval('other.s')", "nextval() takes the name of one of the scope's own sequences"),
    ("SELECT nextval(x)", "nextval() takes the name of one of the scope's own sequences"),
    ("SELECT repeat('a', n) FROM t", "repeat() takes a literal number as its count"),
    ("SELECT a FROM t WHERE b LIKE c", "pattern must be a string literal or a parameter"),
    ("SELECT $1", "numbered and $name/@name parameters are not supported"),
    ("SELECT a FROM t WHERE b = ? AND c = :x", "use either ? or :name parameters"),
    ("SELECT 1; SELECT 2", "only one SQL statement per call"),
    ("", "the statement is empty"),
    (";", "the statement is empty"),
    ("SELECT 'unterminated", "the statement could not be tokenised"),
    ("WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x", "the statement contains DELETE"),
    ("INSERT INTO t VALUES (1)", "sqlQuery only runs read-only SELECT statements; INSERT"),
]

# The same for sqlExec's check.
EXEC_REFUSALS = [
    ("INSERT INTO t VALUES (1) RETURNING a", "RETURNING (sqlExec returns no rows"),
    ("COPY t TO '/tmp/x'", "COPY is not allowed"),
    ("TRUNCATE t", "TRUNCATE is not allowed"),
    ("BEGIN", "BEGIN is not allowed"),
    ("VACUUM", "VACUUM is not allowed"),
    ("CREATE TEMP TABLE t (a int)", "TEMP objects are not allowed"),
    ("CREATE UNLOGGED TABLE t (a int)", "CREATE with UNLOGGED is not allowed"),
    ("CREATE OR REPLACE VIEW v AS SELECT 1", "CREATE OR REPLACE is not allowed"),
    ("CREATE FUNCTION f() RETURNS int AS 'select 1' LANGUAGE sql", "CREATE FUNCTION is not"),
    ("DROP SCHEMA s", "DROP SCHEMA is not allowed (TABLE, INDEX, VIEW)"),
    ("ALTER INDEX i RENAME TO j", "only ALTER TABLE is allowed"),
    ("SELECT 1", "sqlExec does not run SELECT statements; use sqlQuery"),
    ("SELEC oops", "SELEC is not allowed"),
    ("/* a comment */ TRUNCATE t", "TRUNCATE is not allowed"),
]


def refusal(check: object, sql: str) -> str:
    assert callable(check)
    with pytest.raises(InvalidArgument) as caught:
        check(sql)
    return caught.value.message


@pytest.mark.parametrize(("sql", "reason"), QUERY_REFUSALS)
def test_sql_query_refuses_naming_the_reason(sql: str, reason: str) -> None:
    message = refusal(check_query, sql)
    assert message.startswith("statement refused: ")
    assert reason in message


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize(("sql", "reason"), EXEC_REFUSALS)
def test_sql_exec_refuses_naming_the_reason(sql: str, reason: str) -> None:
    assert reason in refusal(check_exec, sql)


@pytest.mark.parametrize("sql", ["SET ROLE x", "SHOW all", "LISTEN x"])
def test_what_sqlglot_cannot_analyse_is_refused(sql: str) -> None:
    # sqlglot falls back to a Command node: never analysed, so never run.
    assert "is not allowed" in refusal(check_exec, sql)


def test_a_statement_over_the_length_cap_is_refused_before_parsing() -> None:
    sql = "SELECT " + "1" * MAX_STATEMENT_CHARS
    assert f"the limit is {MAX_STATEMENT_CHARS}" in refusal(check_query, sql)


def test_a_literal_like_pattern_over_the_cap_is_refused_at_the_cap_it_passes() -> None:
    long = "SELECT a FROM t WHERE b LIKE '" + "x" * (MAX_LIKE_PATTERN_CHARS + 1) + "'"
    message = refusal(check_query, long)
    assert f"a LIKE pattern of {MAX_LIKE_PATTERN_CHARS + 1} characters" in message
    at_cap = "SELECT a FROM t WHERE b LIKE '" + "x" * MAX_LIKE_PATTERN_CHARS + "'"
    assert check_query(at_cap).kind is Kind.SELECT


def test_positional_parameters_become_numbered_in_order() -> None:
    checked = check_query("SELECT a FROM t WHERE b = ? AND c = ?")
    assert checked.sql == "SELECT a FROM t WHERE b = $1 AND c = $2"
    assert checked.names is None
    assert checked.count == 2


def test_a_named_parameter_used_twice_is_one_number() -> None:
    checked = check_query("SELECT a FROM t WHERE b = :x AND c = :y AND d = :x")
    assert checked.sql == "SELECT a FROM t WHERE b = $1 AND c = $2 AND d = $1"
    assert checked.names == ("x", "y")
    assert checked.count == 2


def test_the_parameters_bound_as_patterns_are_numbered_by_place() -> None:
    positional = check_query("SELECT a FROM t WHERE b LIKE ? AND c = ? AND d ILIKE ?")
    assert positional.patterns == (1, 3)
    named = check_query("SELECT a FROM t WHERE c = :q AND b LIKE :p")
    assert named.patterns == (2,)
    assert check_query("SELECT a FROM t WHERE b = ?").patterns == ()


def test_a_trailing_semicolon_or_comment_is_cut_so_the_text_can_be_nested() -> None:
    assert check_query("SELECT 1;").sql == "SELECT 1"
    assert check_query("SELECT 1 -- c").sql == "SELECT 1"


@pytest.mark.parametrize(
    ("sql", "built"),
    [
        ("SELECT repeat('ab', 10)", 20),
        ("SELECT repeat(repeat('a', 3), 4)", 12),
        ("SELECT rpad('x', 50)", 50),  # spaces
        ("SELECT lpad('x', 100, 'é')", 200),  # the fill's widest character, in bytes
        ("SELECT lpad('x', 10, f) FROM t", 40),  # an unknown fill: 4 bytes a character
        ("SELECT upper('x')", 0),
    ],
)
def test_the_size_a_builder_would_make_is_measured_before_it_runs(sql: str, built: int) -> None:
    assert check_query(sql).built == built


def test_the_statement_kinds_sql_exec_runs() -> None:
    kinds = {
        "INSERT INTO t VALUES (1)": Kind.INSERT,
        "INSERT INTO t SELECT 1": Kind.INSERT,
        "UPDATE t SET a = 1": Kind.UPDATE,
        "DELETE FROM t": Kind.DELETE,
        "CREATE TABLE t (a int)": Kind.CREATE,
        "DROP TABLE t": Kind.DROP,
        "ALTER TABLE t DROP COLUMN a": Kind.ALTER,
    }
    assert {sql: check_exec(sql).kind for sql in kinds} == kinds


def test_information_schema_and_own_sequences_are_readable() -> None:
    assert check_query("SELECT * FROM information_schema.tables").kind is Kind.SELECT
    assert check_query("SELECT nextval('s')").count == 0
    assert check_query("SELECT * FROM t WHERE a = ANY(?)").sql.endswith("ANY($1)")
