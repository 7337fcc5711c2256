"""Layer 1 on its own: the sqlglot allow-list (reference sections 3.5 and 10.67)."""

from __future__ import annotations

import pytest

from palimpsest.errors import InvalidArgument
from palimpsest.sqlmem.sqlite.validator import Kind, check_exec, check_query

# Refused everywhere (10.67), including when hidden behind comments or after a ';'.
ALWAYS_REFUSED = [
    "ATTACH DATABASE '/tmp/x.db' AS x",
    "attach '/tmp/x.db' as y",
    "DETACH DATABASE x",
    "VACUUM",
    "VACUUM INTO '/tmp/copy.db'",
    "PRAGMA writable_schema = 1",
    "pragma table_info(t)",
    "BEGIN",
    "BEGIN TRANSACTION",
    "COMMIT",
    "END",
    "ROLLBACK",
    "ROLLBACK TO s1",
    "SAVEPOINT s1",
    "RELEASE s1",
    "RELEASE SAVEPOINT s1",
    "ANALYZE",
    "REINDEX",
    "EXPLAIN SELECT 1",
    "/* hidden */ ATTACH '/tmp/x.db' AS x",
    "-- a comment\nPRAGMA writable_schema = 1",
    "/* a */ -- b\n VACUUM",
    "SELECT 1; ATTACH '/tmp/x.db' AS x",
    "SELECT 1;ATTACH '/tmp/x.db' AS x",
    "SELECT 1; SELECT 2",
    "SELECT 1 -- c\n; PRAGMA user_version = 1",
    "SELEC oops",
    "",
    "   ",
    ";",
    "-- only a comment",
    "SELECT load_extension('/tmp/evil.so')",
    "select LOAD_EXTENSION('/tmp/evil.so')",
    "select Load_Extension ('/tmp/evil.so')",
    "select load_extension/**/('/tmp/evil.so')",
    "select \"load_extension\"('/tmp/evil.so')",
    "select [load_extension]('/tmp/evil.so')",
    "select `load_extension`('/tmp/evil.so')",
    "SELECT readfile('/etc/passwd')",
    "SELECT fts3_tokenizer('simple')",
    "SELECT * FROM pragma_table_info('t')",
    "SELECT * FROM pragma_database_list",
    'SELECT * FROM main."PRAGMA_database_list"',
    "SELECT * FROM t JOIN [pragma_index_list]('t')",
    "SELECT (SELECT count(*) FROM dbstat)",
    "SELECT sql FROM sqlite_stmt",
    "CREATE VIEW v AS SELECT * FROM pragma_database_list",
    "CREATE VIEW v AS SELECT name FROM t WHERE name IN (SELECT name FROM pragma_table_list)",
    "CREATE TABLE c AS SELECT * FROM pragma_compile_options",
    "INSERT INTO t SELECT file FROM pragma_database_list",
    "UPDATE t SET a = (SELECT count(*) FROM pragma_function_list)",
    "DELETE FROM t WHERE a IN (SELECT seq FROM pragma_database_list)",
    "SELECT * FROM other.t",
    "SELECT * FROM temp.t",
]

QUERY_REFUSED = [
    "INSERT INTO t VALUES (1)",
    "UPDATE t SET a = 1",
    "DELETE FROM t",
    "CREATE TABLE t (a)",
    "DROP TABLE t",
    "WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x",
    "WITH x AS (SELECT 1) INSERT INTO t SELECT * FROM x",
    "SELECT * INTO u FROM t",
    "REPLACE INTO t VALUES (1)",
]

EXEC_REFUSED = [
    "SELECT 1",
    "WITH x AS (SELECT 1) SELECT * FROM x",
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END",
    "CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1 END",
    "CREATE TEMP TABLE t (a)",
    "CREATE TEMPORARY VIEW v AS SELECT 1",
    "CREATE VIRTUAL TABLE f USING fts5(x)",
    "DROP TRIGGER tr",
    "INSERT INTO temp.t VALUES (1)",
    "INSERT INTO t SELECT load_extension('x')",
    "REPLACE INTO t SELECT load_extension('x')",
    "INSERT INTO t SELECT readfile('/etc/passwd')",
    "UPDATE t SET a = (SELECT x FROM other.t)",
    "ALTER TABLE t ADD COLUMN c",  # sqlglot cannot analyse it without a type: fail closed
]

QUERY_ALLOWED = [
    "SELECT 1",
    "SELECT 1;",
    "SELECT 1; -- trailing comment",
    "SELECT 1 /* ; ATTACH 'x' AS y */",
    "  -- leading comment\n SELECT * FROM t WHERE a = ?",
    "SELECT a, count(*) FROM t WHERE b = :b GROUP BY a ORDER BY 2 DESC LIMIT 5 OFFSET 1",
    "SELECT * FROM main.t",
    "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 9) "
    "SELECT sum(n) FROM c",
    "SELECT 1 UNION SELECT 2",
    "SELECT 'load_extension(' AS data",
    "SELECT 'ATTACH DATABASE x AS y; PRAGMA z' AS data",
    "SELECT printf('%d', a), instr(b, 'x'), json_extract(c, '$.k'), upper(b) FROM t",
    "SELECT printf('%.*c', 40000, 'x'), format('%-10s|%5.2f|%%|%*d', a, 1.5, 3, 4) FROM t",
    "SELECT printf('%.*c', 500000, 'x') || printf('%500000c', 'y')",
    "SELECT x.value FROM json_each('[1, 2]') AS x",
    "SELECT row_number() OVER (ORDER BY a) FROM t",
    "SELECT * FROM t WHERE a IN (WITH q AS (SELECT 1) SELECT * FROM q)",
    "SELECT name FROM sqlite_master WHERE type = 'table'",
]

EXEC_ALLOWED = [
    ("CREATE TABLE t (id INTEGER PRIMARY KEY, a TEXT NOT NULL, b BLOB)", Kind.CREATE),
    ("CREATE TABLE IF NOT EXISTS t (a INTEGER DEFAULT (random()), CHECK (a > 0))", Kind.CREATE),
    ("CREATE TABLE t (a TEXT) STRICT", Kind.CREATE),
    ("CREATE TABLE t2 AS SELECT * FROM t", Kind.CREATE),
    ("CREATE INDEX i ON t (a)", Kind.CREATE),
    ("CREATE UNIQUE INDEX IF NOT EXISTS i ON t (a)", Kind.CREATE),
    ("CREATE VIEW v AS SELECT a FROM t", Kind.CREATE),
    ("DROP TABLE t", Kind.DROP),
    ("DROP TABLE IF EXISTS t", Kind.DROP),
    ("DROP INDEX i", Kind.DROP),
    ("DROP VIEW v", Kind.DROP),
    ("ALTER TABLE t RENAME TO u", Kind.ALTER),
    ("ALTER TABLE t ADD COLUMN c TEXT", Kind.ALTER),
    ("ALTER TABLE t RENAME COLUMN a TO b", Kind.ALTER),
    ("ALTER TABLE t DROP COLUMN c", Kind.ALTER),
    ("INSERT INTO t VALUES (?, ?)", Kind.INSERT),
    ("INSERT INTO t (a) VALUES (:a), (@b), ($c)", Kind.INSERT),
    ("INSERT OR REPLACE INTO t VALUES (1)", Kind.INSERT),
    ("REPLACE INTO t (a) VALUES (1)", Kind.INSERT),
    ("/* c */ REPLACE INTO t (a) VALUES ('x')", Kind.INSERT),
    ("INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = excluded.b", Kind.INSERT),
    ("INSERT INTO t DEFAULT VALUES", Kind.INSERT),
    ("INSERT INTO t (a) VALUES ('load_extension(''x'')')", Kind.INSERT),
    ("INSERT INTO t (a) VALUES ('ATTACH DATABASE x AS y')", Kind.INSERT),
    ("WITH x AS (SELECT 1 AS a) INSERT INTO t (a) SELECT a FROM x", Kind.INSERT),
    ("UPDATE t SET a = a + 1 WHERE b = ?", Kind.UPDATE),
    ("UPDATE t SET a = 1 RETURNING *", Kind.UPDATE),
    ("DELETE FROM t WHERE a = $a", Kind.DELETE),
    ("DELETE FROM t;", Kind.DELETE),
]


@pytest.mark.parametrize("sql", ALWAYS_REFUSED + QUERY_REFUSED)
def test_query_refuses(sql: str) -> None:
    with pytest.raises(InvalidArgument, match="statement refused"):
        check_query(sql)


@pytest.mark.parametrize("sql", ALWAYS_REFUSED + EXEC_REFUSED)
def test_exec_refuses(sql: str) -> None:
    with pytest.raises(InvalidArgument, match="statement refused"):
        check_exec(sql)


@pytest.mark.parametrize("sql", QUERY_ALLOWED)
def test_query_allows(sql: str) -> None:
    assert check_query(sql).kind is Kind.SELECT


@pytest.mark.parametrize(("sql", "kind"), EXEC_ALLOWED)
def test_exec_allows(sql: str, kind: Kind) -> None:
    checked = check_exec(sql)
    assert checked.kind is kind
    assert checked.sql == sql  # what runs is the caller's text, never a rewrite


@pytest.mark.parametrize(
    ("sql", "reason"),
    [
        ("ATTACH '/x' AS x", "ATTACH is not allowed"),
        ("/* */ PRAGMA writable_schema = 1", "PRAGMA is not allowed"),
        ("VACUUM INTO '/x'", "VACUUM is not allowed"),
        ("SAVEPOINT s", "SAVEPOINT is not allowed"),
        ("BEGIN", "BEGIN is not allowed"),
        ("SELECT 1; SELECT 2", "only one SQL statement per call"),
        ("select `load_extension`('x')", "load_extension is denied"),
        ("INSERT INTO t SELECT readfile('/etc/passwd')", "function readfile() is not allowed"),
        ("CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1; END", "only one SQL statement"),
        ("CREATE TRIGGER tr AFTER INSERT ON t BEGIN SELECT 1 END", "CREATE TRIGGER is not"),
        ("CREATE VIRTUAL TABLE f USING fts5(x)", "not allowed"),
        ("CREATE VIEW v AS SELECT * FROM pragma_database_list", "PRAGMA functions (pragma_*)"),
        ("INSERT INTO t SELECT * FROM pragma_table_info('t')", "PRAGMA functions (pragma_*)"),
    ],
)
def test_refusals_say_why(sql: str, reason: str) -> None:
    with pytest.raises(InvalidArgument) as caught:
        check_exec(sql)
    assert reason in caught.value.message
    assert reason in caught.value.details["reason"]


def test_query_refusal_names_the_write() -> None:
    with pytest.raises(InvalidArgument, match="read-only; the statement contains DELETE"):
        check_query("WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x")
    with pytest.raises(InvalidArgument, match="sqlQuery only runs read-only SELECT"):
        check_query("INSERT INTO t VALUES (1)")


def test_overlong_statement_is_refused_with_the_numbers() -> None:
    sql = "SELECT '" + "x" * 100_001 + "'"
    with pytest.raises(InvalidArgument, match=r"100\d+ characters; the limit is 100000"):
        check_query(sql)


@pytest.mark.parametrize(
    "sql",
    [
        # SQLite repeats %c one character at a time inside one call: 2^31 of them is 15 s
        "SELECT printf('%.*c', 2000000000, 'x')",
        "SELECT format('%.2000000000c', 'x')",
        "SELECT PRINTF('%-*.*c', 9, 1000001, 'x')",
        "SELECT printf('%!.*c', -1000001, 'x')",
        "SELECT printf('%.600000c', 'x') || printf('%.600000c', 'y')",  # the sum counts
        "CREATE VIEW v AS SELECT printf('%.*c', 2000000000, 'x') AS p",
        "SELECT printf('%.*c', n, 'x') FROM t",  # a width only known when it runs
        "SELECT printf(a, 2000000000, 'x') FROM t",  # a format only known when it runs
        "SELECT printf(?, 2000000000, 'x')",
        "SELECT printf('%' || '.2000000000c', 'x')",
    ],
)
def test_printf_padding_is_bounded_before_it_runs(sql: str) -> None:
    check = check_exec if sql.startswith("CREATE") else check_query
    with pytest.raises(InvalidArgument, match="printf"):
        check(sql)
