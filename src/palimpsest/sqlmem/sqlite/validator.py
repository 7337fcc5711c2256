"""Defence layer 1: a parser-based allow-list for agent SQL (SQLite dialect).

sqlglot is lenient (``SELEC oops`` parses as an alias, ``VACUUM INTO`` and ``CREATE TRIGGER``
fall back to ``Command``), so nothing here is a deny-list of bad kinds: a statement passes only
when it parses into exactly one node of an allowed type and every part of its tree is allowed.
Anything sqlglot cannot analyse fully is refused. The SQLite authorizer (``authorizer.py``)
enforces the same rules again on the connection, so a gap here is not a hole.

Decisions:
- ``CREATE TRIGGER`` is refused: sqlglot cannot parse trigger bodies, bodies need ``;`` (one
  statement per call), and a trigger would run code later in other callers' statements.
- ``CREATE VIRTUAL TABLE`` and ``TEMP`` objects are refused: modules vary by build, and temp
  objects would live in a pooled connection rather than in the scope's file.
- PRAGMA functions (``pragma_table_info``, ``pragma_database_list``...) and SQLite's
  introspection tables (``dbstat``, ``sqlite_stmt``, ``sqlite_dbpage``) are refused wherever a
  table or function may stand, views included: a view over them would read them later.
- ``REPLACE INTO`` is analysed as the ``INSERT OR REPLACE`` it is (sqlglot gives ``Command``).
- Numbered parameters (``?1``) do not parse in sqlglot; use ``?`` or ``:name``/``@name``/``$name``.
- ``printf``/``format`` take a literal format string whose widths and precisions are literal
  numbers (``*`` reads a literal argument), at most ``MAX_PRINTF_PADDING`` in all per statement:
  SQLite repeats ``%.Nc`` one character at a time inside one call, after the value limit has
  already failed it, and the progress handler (the time limit) never runs inside a call.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

import sqlglot
from sqlglot import Token, TokenType, exp
from sqlglot.errors import SqlglotError

from palimpsest.sqlmem.core.rules import (
    EXEC_ROOTS,
    MAX_STATEMENT_CHARS,
    OBJECT_KINDS,
    QUERY_ROOTS,
    WRITES,
    Kind,
    cached,
    drops_column,
    refused,
)
from palimpsest.sqlmem.sqlite.authorizer import ALLOWED_FUNCTIONS, introspection

__all__ = ["MAX_STATEMENT_CHARS", "Checked", "Kind", "check_exec", "check_query"]

# sqlglot logs a warning for every statement it falls back on; those are refused anyway.
logging.getLogger("sqlglot").setLevel(logging.ERROR)

# The widths and precisions of every printf/format in one statement, summed.
MAX_PRINTF_PADDING = 1_000_000
_PRINTF = frozenset({"printf", "format"})
# One conversion: '%', its flags, width and precision (digits or '*'), length, and its letter.
_SPEC = re.compile(r"%([-+ #!0,]*)(\*|\d+)?(?:\.(\*|\d*))?(l{0,2})(.?)", re.S)
_DIALECT = "sqlite"
_LITERALS = (TokenType.STRING, TokenType.HEX_STRING, TokenType.BIT_STRING)
_OBJECT_WORDS = {"TEMP", "TEMPORARY", "VIRTUAL", "UNIQUE", "TRIGGER", "TABLE", "INDEX", "VIEW"}
# Statement kinds refused by name, so the message says exactly what was refused.
_NAMED_REFUSALS = {
    "ATTACH", "DETACH", "PRAGMA", "VACUUM", "BEGIN", "COMMIT", "END", "ROLLBACK",
    "SAVEPOINT", "RELEASE", "ANALYZE", "REINDEX", "EXPLAIN",
}  # fmt: skip

_INTROSPECTION_REFUSAL = (
    "PRAGMA functions (pragma_*) and introspection tables (dbstat, sqlite_stmt, sqlite_dbpage) "
    "are not allowed, in views neither"
)


@dataclass(frozen=True, slots=True)
class Checked:
    sql: str
    kind: Kind


def check_query(sql: str) -> Checked:
    """Accept exactly one read-only SELECT (or WITH ... SELECT, or a compound select)."""
    return _cached_query(sql)


def check_exec(sql: str) -> Checked:
    """Accept exactly one DDL/DML statement: CREATE/DROP TABLE|INDEX|VIEW, ALTER TABLE,
    INSERT (also OR REPLACE / REPLACE), UPDATE, DELETE, each optionally with WITH."""
    return _cached_exec(sql)


def _check_query(sql: str) -> Checked:
    tree, lead = _one_statement(sql)
    if not isinstance(tree, QUERY_ROOTS):
        raise refused(_not_run("sqlQuery only runs read-only SELECT statements", lead))
    for node in tree.walk():
        if isinstance(node, WRITES):
            raise refused(f"sqlQuery is read-only; the statement contains {node.key.upper()}")
    if tree.find(exp.Into) is not None:
        raise refused("SELECT ... INTO is not allowed")
    _check_tree(tree)
    return Checked(sql, Kind.SELECT)


def _check_exec(sql: str) -> Checked:
    tree, lead = _one_statement(sql)
    kind = EXEC_ROOTS.get(type(tree))
    if kind is None:
        if isinstance(tree, QUERY_ROOTS):
            raise refused("sqlExec does not run SELECT statements; use sqlQuery for reads")
        raise refused(_not_run("sqlExec only runs DDL/DML statements", lead))
    if isinstance(tree, exp.Create):
        _check_create(tree)
    if isinstance(tree, exp.Drop) and str(tree.args.get("kind") or "").upper() not in OBJECT_KINDS:
        raise refused(f"{lead} is not allowed (DROP TABLE, INDEX and VIEW are)")
    if isinstance(tree, exp.Alter) and str(tree.args.get("kind") or "").upper() != "TABLE":
        raise refused("only ALTER TABLE is allowed")
    for node in tree.walk():
        # A write is allowed only at the root: no data-changing CTEs or nested statements.
        if node is not tree and isinstance(node, WRITES) and not drops_column(tree, node):
            raise refused(f"a nested {node.key.upper()} is not allowed")
    _check_tree(tree)
    return Checked(sql, kind)


# Parsing is the validator's cost; agents repeat statement texts, so accepted short ones are cached
# (a refusal raises, and raising results are never cached).
_cached_query = cached(_check_query)
_cached_exec = cached(_check_exec)


def _one_statement(sql: str) -> tuple[exp.Expr, str]:
    """Parse ``sql`` into exactly one statement; also return its leading keyword(s)."""
    if len(sql) > MAX_STATEMENT_CHARS:
        raise refused(f"statement is {len(sql)} characters; the limit is {MAX_STATEMENT_CHARS}")
    tokens = _tokens(sql)
    if tokens and tokens[0].token_type is TokenType.REPLACE:
        # sqlglot cannot parse REPLACE INTO (it swallows the rest as one string); it is
        # INSERT OR REPLACE INTO, so analyse that. The original text is what runs.
        first = tokens[0]
        sql = f"{sql[: first.start]}INSERT OR REPLACE{sql[first.end + 1 :]}"
        tokens = _tokens(sql)
    _check_tokens(tokens)
    try:
        trees = sqlglot.parse(sql, read=_DIALECT)
    except SqlglotError as e:
        raise refused("the statement could not be parsed; only plain SQLite SQL is allowed") from e
    # A trailing ';' or comment yields None or Semicolon; neither is a statement.
    real = [t for t in trees if t is not None and not isinstance(t, exp.Semicolon)]
    if not real:
        raise refused("the statement is empty")
    if len(real) > 1:
        raise refused("only one SQL statement per call (found more after a ';')")
    return real[0], _lead(tokens)


def _tokens(sql: str) -> list[Token]:
    try:
        return list(sqlglot.tokenize(sql, read=_DIALECT))
    except SqlglotError as e:
        raise refused("the statement could not be tokenised") from e


def _check_tokens(tokens: list[Token]) -> None:
    """Token-level checks that hold whatever the parser makes of the statement."""
    for token in tokens:
        # Strings are data: 'load_extension(' or 'ATTACH' inside a literal is not refused.
        if token.token_type in _LITERALS:
            continue
        if token.text.strip('"`[]').lower() == "load_extension":
            raise refused("load_extension is denied")


def _lead(tokens: list[Token]) -> str:
    """The statement's leading keyword, with its object for CREATE/DROP (for messages)."""
    if not tokens:
        return ""
    words = [tokens[0].text.upper()]
    if words[0] in ("CREATE", "DROP"):
        for token in tokens[1:3]:
            if token.text.upper() not in _OBJECT_WORDS:
                break
            words.append(token.text.upper())
    return " ".join(words)


def _not_run(what: str, lead: str) -> str:
    if lead in _NAMED_REFUSALS or lead.startswith(("CREATE", "DROP")):
        return f"{lead} is not allowed"
    return f"{what}; {lead or 'this'} is not one"


def _check_create(tree: exp.Create) -> None:
    kind = str(tree.args.get("kind") or "").upper()
    if kind not in OBJECT_KINDS:
        raise refused(f"CREATE {kind or '?'} is not allowed (TABLE, INDEX and VIEW are)")
    props = tree.args.get("properties")
    if props is not None:
        for prop in props.expressions:
            if isinstance(prop, exp.TemporaryProperty):
                raise refused("TEMP objects are not allowed; create ordinary tables")
            if not isinstance(prop, exp.StrictProperty):
                raise refused(f"CREATE with {prop.sql(dialect=_DIALECT)} is not allowed")


def _check_tree(tree: exp.Expr) -> None:
    padding = 0
    for node in tree.walk():
        if _is_printf(node):
            padding += _printf_padding(node)
            if padding > MAX_PRINTF_PADDING:
                raise refused(
                    f"printf()/format() widths and precisions add up to more than "
                    f"{MAX_PRINTF_PADDING} in one statement"
                )
        if isinstance(node, exp.Command | exp.Pragma | exp.Attach | exp.Detach):
            raise refused(f"{node.key.upper()} is not allowed")
        if isinstance(node, exp.Transaction | exp.Commit | exp.Rollback):
            raise refused("transaction control is not allowed; sqlExec batches are atomic")
        if isinstance(node, exp.Anonymous):
            name = str(node.name).lower()
            if introspection(name):
                raise refused(_INTROSPECTION_REFUSAL)
            if name not in ALLOWED_FUNCTIONS:
                raise refused(f"function {name}() is not allowed")
        if isinstance(node, exp.Table):
            if introspection(node.name):
                raise refused(_INTROSPECTION_REFUSAL)
            db = node.args.get("db")
            if db is not None and str(db.name).lower() != "main":
                raise refused("only the scope's own database (main) can be named")


def _is_printf(node: exp.Expr) -> bool:
    return isinstance(node, exp.Format) or (
        isinstance(node, exp.Anonymous) and str(node.name).lower() in _PRINTF
    )


def _printf_padding(node: exp.Expr) -> int:
    """The widths and precisions a printf/format call asks for, read from its literals."""
    if isinstance(node, exp.Format):
        fmt, args = node.this, list(node.expressions)
    else:
        if not node.expressions:
            return 0
        fmt, *args = node.expressions
    if not (isinstance(fmt, exp.Literal) and fmt.is_string):
        raise refused("printf()/format() take a literal format string")
    total, next_arg = 0, 0
    for match in _SPEC.finditer(fmt.name):
        _flags, width, precision, _length, conversion = match.groups()
        for part in (width, precision):
            if part == "*":
                total += _literal_count(args[next_arg] if next_arg < len(args) else None)
                next_arg += 1
            elif part:
                total += int(part)
        if conversion != "%":
            next_arg += 1
    return total


def _literal_count(arg: exp.Expr | None) -> int:
    """The size a ``*`` takes from its argument: it must be a literal integer."""
    if isinstance(arg, exp.Neg):
        arg = arg.this
    if isinstance(arg, exp.Paren):
        return _literal_count(arg.this)
    if isinstance(arg, exp.Literal) and not arg.is_string and arg.name.isdigit():
        return int(arg.name)
    if arg is None:
        return 0
    raise refused("a printf()/format() '*' width or precision must be a literal number")
