"""Defence layer 1 on PostgreSQL: the sqlglot allow-list in the PostgreSQL dialect.

The same rules as the SQLite validator (``sqlite/validator.py``; the tables both share are
``core/rules.py``): a statement passes only when it parses into exactly one node of an
allowed kind and every part of its tree is allowed; anything sqlglot cannot analyse fully
(``Command``: ``SET ROLE``, ``DO``, ``CREATE EXTENSION``, ``ALTER TABLE ... OWNER``...) is
refused. PostgreSQL's own privileges (``admin.py``) enforce
the same again on the connection, so a gap here is not a hole.

PostgreSQL specifics:
- Functions: an allow-list by name (``functions.py``). sqlglot turns many calls into typed
  nodes (``version()`` is ``CurrentVersion``); a typed node is judged by the name its
  PostgreSQL rendering calls, and operators rendered without a name pass (layer 2 grants only
  the functions behind operators and casts).
- Tables: unqualified (they resolve in the scope's own schema) or in ``information_schema``
  (filtered by privilege); nothing named ``pg_*`` (the catalogs are unreadable anyway).
- Refused kinds: ``COPY``, ``SET``/``RESET``/``SHOW``, ``GRANT``/``REVOKE``, ``LISTEN``/
  ``NOTIFY``, ``TRUNCATE``, ``LOCK``, ``VACUUM``, transaction control, ``SELECT ... FOR
  UPDATE``/``INTO``, ``RETURNING`` (``sqlExec`` returns no rows), ``TEMP``/``UNLOGGED``
  objects, and ``CREATE`` of anything but a table, index or view.
- Nothing that looks a name up in the catalogs: the ``reg*`` types (``'x'::regclass``,
  ``CAST(x AS regrole)``, a ``regnamespace`` column) and schema-qualified types are refused,
  and a sequence function names its sequence as a literal without a schema. Such a lookup
  answers differently when another scope's schema or role exists.
- Work inside one call that PostgreSQL checks for cancellation too rarely: a ``LIKE``,
  ``ILIKE``, ``SIMILAR TO`` (``~~``, ``~~*``) pattern is a string literal or a parameter, of at
  most ``MAX_LIKE_PATTERN_CHARS`` (a longer pattern runs on long past ``statement_timeout``);
  ``repeat``/``lpad``/``rpad`` take a literal count, and the size they would build (``built``)
  is refused over the value cap before anything runs (the value guard sees a value only once
  it is built).
- Parameters: ``?`` (positional) and ``:name``, as on SQLite; they are rewritten to
  PostgreSQL's ``$n`` token by token, everything else of the text runs as written. ``$1``,
  ``$name`` and ``@name`` are refused (``?`` is always a parameter, never jsonb's operator).
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

import sqlglot
from sqlglot import Token, TokenType, exp
from sqlglot.errors import SqlglotError

from palimpsest.errors import InvalidArgument
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
from palimpsest.sqlmem.postgres.functions import ALLOWED_PG_FUNCTIONS

_DIALECT = "postgres"
_LITERALS = (
    TokenType.STRING,
    TokenType.HEX_STRING,
    TokenType.BIT_STRING,
    TokenType.HEREDOC_STRING,
    TokenType.NATIONAL_STRING,
    TokenType.RAW_STRING,
    TokenType.BYTE_STRING,
)
_NAME_TOKENS = (TokenType.VAR, TokenType.NAME)
_REFUSED_NODES: dict[type[exp.Expr], str] = {
    exp.Command: "this statement kind",
    exp.Copy: "COPY",
    exp.Set: "SET",
    exp.TruncateTable: "TRUNCATE",
    exp.Transaction: "transaction control",
    exp.Commit: "transaction control",
    exp.Rollback: "transaction control",
    exp.Lock: "SELECT ... FOR UPDATE/SHARE",
    exp.Into: "SELECT ... INTO",
    exp.Returning: "RETURNING (sqlExec returns no rows; read with sqlQuery)",
    exp.Pragma: "PRAGMA",
}
_LEAD = re.compile(r"[A-Za-z]+")
# A function call rendered by sqlglot: its name, then '('.
_CALL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_ALWAYS_OK = frozenset({"cast", "coalesce", "nullif", "greatest", "least"})
# Types whose input looks a name up in the catalogs (regclass, regrole, regnamespace...).
_CATALOG_TYPE = re.compile(
    r"\breg(class|collation|config|dictionary|namespace|oper|operator|proc|procedure|role|type)\b"
)
# Functions whose first argument is a regclass: a relation name looked up when it runs.
_SEQUENCE_FUNCTIONS = frozenset({"nextval", "currval", "setval"})


# The longest LIKE/ILIKE/SIMILAR TO pattern, literal or bound (characters).
MAX_LIKE_PATTERN_CHARS = 1000
_PATTERNS = (exp.Like, exp.ILike, exp.SimilarTo)
# Functions whose result size is their count argument (times the string, for repeat).
_BUILDERS = frozenset({"repeat", "lpad", "rpad"})


@dataclass(frozen=True, slots=True)
class PgChecked:
    """An accepted statement: the text to run (``$n`` parameters) and how to bind it."""

    sql: str
    kind: Kind
    names: tuple[str, ...] | None  # named parameters in $n order; None for positional
    count: int  # how many $n parameters the text has
    patterns: tuple[int, ...] = ()  # the $n (from 1) bound as LIKE patterns
    built: int = 0  # the most bytes one repeat/lpad/rpad call of the text builds


def check_query(sql: str) -> PgChecked:
    """Exactly one read-only SELECT (or WITH ... SELECT, or a compound select)."""
    return _cached_query(sql)


def check_exec(sql: str) -> PgChecked:
    """Exactly one CREATE/DROP TABLE|INDEX|VIEW, ALTER TABLE, INSERT, UPDATE or DELETE."""
    return _cached_exec(sql)


def _check_query(sql: str) -> PgChecked:
    tree, tokens = _one_statement(sql)
    if not isinstance(tree, QUERY_ROOTS):
        raise refused(f"sqlQuery only runs read-only SELECT statements; {_lead(sql)} is not one")
    for node in tree.walk():
        if isinstance(node, WRITES):
            raise refused(f"sqlQuery is read-only; the statement contains {node.key.upper()}")
    _check_tree(tree)
    return _bind_plan(sql, tree, tokens, Kind.SELECT)


def _check_exec(sql: str) -> PgChecked:
    tree, tokens = _one_statement(sql)
    kind = EXEC_ROOTS.get(type(tree))
    if kind is None:
        if isinstance(tree, QUERY_ROOTS):
            raise refused("sqlExec does not run SELECT statements; use sqlQuery for reads")
        raise refused(f"{_lead(sql)} is not allowed (sqlExec runs DDL/DML statements)")
    if isinstance(tree, exp.Create | exp.Drop):
        what = str(tree.args.get("kind") or "").upper()
        if what not in OBJECT_KINDS:
            raise refused(f"{tree.key.upper()} {what or '?'} is not allowed (TABLE, INDEX, VIEW)")
    if isinstance(tree, exp.Create):
        _check_create(tree)
    if isinstance(tree, exp.Alter) and str(tree.args.get("kind") or "").upper() != "TABLE":
        raise refused("only ALTER TABLE is allowed")
    for node in tree.walk():
        if node is not tree and isinstance(node, WRITES) and not drops_column(tree, node):
            raise refused(f"a nested {node.key.upper()} is not allowed")
    _check_tree(tree)
    return _bind_plan(sql, tree, tokens, kind)


_cached_query = cached(_check_query)
_cached_exec = cached(_check_exec)


def _one_statement(sql: str) -> tuple[exp.Expr, list[Token]]:
    if len(sql) > MAX_STATEMENT_CHARS:
        raise refused(f"statement is {len(sql)} characters; the limit is {MAX_STATEMENT_CHARS}")
    try:
        tokens = list(sqlglot.tokenize(sql, read=_DIALECT))
    except SqlglotError as e:
        raise refused("the statement could not be tokenised") from e
    for token in tokens:
        if token.token_type in _LITERALS:
            continue  # data: 'COPY ... PROGRAM' inside a string is not refused
        if token.token_type is TokenType.PARAMETER:
            raise refused("numbered and $name/@name parameters are not supported; use ? or :name")
    try:
        trees = sqlglot.parse(sql, read=_DIALECT)
    except SqlglotError as e:
        raise refused("the statement could not be parsed; only plain PostgreSQL is allowed") from e
    real = [t for t in trees if t is not None and not isinstance(t, exp.Semicolon)]
    if not real:
        raise refused("the statement is empty")
    if len(real) > 1:
        raise refused("only one SQL statement per call (found more after a ';')")
    return real[0], tokens


def _check_create(tree: exp.Create) -> None:
    props = tree.args.get("properties")
    for prop in props.expressions if props is not None else ():
        if isinstance(prop, exp.TemporaryProperty):
            raise refused("TEMP objects are not allowed; create ordinary tables")
        raise refused(f"CREATE with {prop.sql(dialect=_DIALECT)} is not allowed")
    if tree.args.get("replace"):
        raise refused("CREATE OR REPLACE is not allowed; DROP, then CREATE")


def _check_tree(tree: exp.Expr) -> None:
    for node in tree.walk():
        if isinstance(node, _PATTERNS):
            _check_pattern(node.expression)
        for kind, what in _REFUSED_NODES.items():
            if isinstance(node, kind):
                raise refused(f"{what} is not allowed")
        if isinstance(node, exp.Func):
            name = _function_name(node)
            if name is not None and name not in ALLOWED_PG_FUNCTIONS | _ALWAYS_OK:
                raise refused(f"function {name}() is not allowed")
            if isinstance(node, exp.Anonymous) and isinstance(node.parent, exp.Dot):
                raise refused("functions of another schema are not allowed")
        if isinstance(node, exp.Dot) and isinstance(node.expression, exp.Anonymous):
            raise refused("functions of another schema are not allowed")
        if isinstance(node, exp.Table):
            _check_table(node)
        if isinstance(node, exp.DataType | exp.ObjectIdentifier):
            _check_type(node)
        if isinstance(node, exp.Anonymous) and str(node.name).lower() in _SEQUENCE_FUNCTIONS:
            _check_sequence(node)


def _check_pattern(pattern: exp.Expr) -> None:
    if isinstance(pattern, exp.Placeholder):
        return  # its bound value is measured when it is bound (binding.py)
    if not (isinstance(pattern, exp.Literal) and pattern.is_string):
        raise refused("a LIKE, ILIKE or SIMILAR TO pattern must be a string literal or a parameter")
    if len(pattern.name) > MAX_LIKE_PATTERN_CHARS:
        raise refused(_long_pattern(len(pattern.name)))


def _long_pattern(chars: int) -> str:
    return f"a LIKE pattern of {chars} characters; the limit is {MAX_LIKE_PATTERN_CHARS}"


def pattern_too_long(chars: int) -> InvalidArgument:
    return refused(_long_pattern(chars))


def _built(tree: exp.Expr) -> int:
    """The most bytes one repeat/lpad/rpad call builds, from its literal count (and string)."""
    most = 0
    for node in tree.walk():
        if isinstance(node, exp.Func) and (name := _function_name(node)) in _BUILDERS:
            most = max(most, _build_size(node, name))
    return most


def _build_size(node: exp.Func, name: str) -> int:
    if isinstance(node, exp.Repeat):
        text, count = node.this, node.args.get("times")
    elif isinstance(node, exp.Pad):
        text, count = node.this, node.expression
    else:  # a spelling sqlglot leaves as a plain call: (string, count, ...)
        args = list(node.expressions)
        text, count = [*args, None, None][:2]
    times = _literal_int(count)
    if times is None:
        raise refused(f"{name}() takes a literal number as its count")
    if isinstance(node, exp.Pad):
        fill = node.args.get("fill_pattern")
        if fill is None:
            return times  # spaces
        if isinstance(fill, exp.Literal) and fill.is_string:
            return times * max((len(c.encode()) for c in fill.name), default=1)
        return times * 4  # characters of up to 4 bytes
    if isinstance(text, exp.Literal) and text.is_string:
        return times * len(text.name.encode())
    return times * max(_built(text) if isinstance(text, exp.Expr) else 0, 1)


def _literal_int(arg: exp.Expr | None) -> int | None:
    if isinstance(arg, exp.Paren):
        return _literal_int(arg.this)
    if isinstance(arg, exp.Literal) and not arg.is_string and arg.name.isdigit():
        return int(arg.name)
    return None


def _check_type(node: exp.DataType | exp.ObjectIdentifier) -> None:
    if isinstance(node, exp.DataType) and isinstance(node.args.get("kind"), exp.Dot):
        raise refused("schema-qualified types are not allowed")
    if _CATALOG_TYPE.search(node.sql(dialect=_DIALECT).lower()):
        raise refused("the reg* types (catalog lookups) are not allowed")


def _check_sequence(node: exp.Anonymous) -> None:
    first = node.expressions[0] if node.expressions else None
    if not (isinstance(first, exp.Literal) and first.is_string and "." not in first.name):
        raise refused(
            f"{str(node.name).lower()}() takes the name of one of the scope's own sequences "
            "as a literal, without a schema"
        )


def _check_table(node: exp.Table) -> None:
    if node.args.get("catalog") is not None:
        raise refused("only the scope's own tables can be named")
    db = node.args.get("db")
    schema = str(db.name).lower() if db is not None else None
    if schema not in (None, "information_schema"):
        raise refused("only the scope's own tables (unqualified) and information_schema")
    if str(node.name).lower().startswith("pg_"):
        raise refused("the system catalogs (pg_*) are not readable; use information_schema")


def _function_name(node: exp.Func) -> str | None:
    """The PostgreSQL name a function node calls; None for an operator or a plain form."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    # Render the node alone (its arguments replaced by NULL), so the cost does not depend on
    # the size of the subtree, and read the called name.
    shallow = type(node)(**{k: _stub(v) for k, v in node.args.items()})
    try:
        text = shallow.sql(dialect=_DIALECT)
    except (SqlglotError, ValueError, TypeError, AttributeError):
        return "?"  # cannot tell what it calls: refused
    match = _CALL.match(text)
    return match.group(1).lower() if match else None


def _stub(value: object) -> object:
    if isinstance(value, exp.DataType):
        return value  # a cast's target type is part of what it calls
    if isinstance(value, exp.Expr):
        return exp.Null()
    if isinstance(value, list):
        return [exp.Null() if isinstance(v, exp.Expr) else v for v in value]
    return value


def _bind_plan(sql: str, tree: exp.Expr, tokens: list[Token], kind: Kind) -> PgChecked:
    """Rewrite ``?`` and ``:name`` to ``$n``, token by token; refuse a mix or an ambiguity."""
    expected = [str(p.name) if p.name else "?" for p in tree.find_all(exp.Placeholder)]
    found: list[tuple[int, int, str]] = []  # (start, end, name or "?")
    for i, token in enumerate(tokens):
        if token.token_type is TokenType.PLACEHOLDER and token.text == "?":
            found.append((token.start, token.end, "?"))
        elif token.token_type is TokenType.COLON and i + 1 < len(tokens):
            nxt = tokens[i + 1]
            if nxt.token_type in _NAME_TOKENS and nxt.start == token.end + 1:
                found.append((token.start, nxt.end, nxt.text))
    if sorted(n for *_, n in found) != sorted(expected):
        raise refused("the parameters could not be told apart; put spaces around ':' in slices")
    if {n == "?" for *_, n in found} == {True, False}:
        raise refused("use either ? or :name parameters in one statement, not both")
    names: list[str] = []
    out: list[str] = []
    last = 0
    for start, end, name in found:
        if name == "?":
            names.append(name)
            number = len(names)
        else:
            if name not in names:
                names.append(name)
            number = names.index(name) + 1
        out += [sql[last:start], f"${number}"]
        last = end + 1
    # Cut after the last real token: a trailing ';' or comment goes, so the text can be nested.
    body_end = max((t.end for t in tokens if t.token_type is not TokenType.SEMICOLON), default=-1)
    out.append(sql[last : body_end + 1])
    positional = not names or names[0] == "?"
    return PgChecked(
        "".join(out),
        kind,
        None if positional else tuple(names),
        len(names),
        patterns=_pattern_numbers(tree, names, positional),
        built=_built(tree),
    )


def _pattern_numbers(tree: exp.Expr, names: list[str], positional: bool) -> tuple[int, ...]:
    """The ``$n`` of every parameter bound as a LIKE pattern."""
    bound = [n.expression for n in tree.walk() if isinstance(n, _PATTERNS)]
    marks = [p for p in bound if isinstance(p, exp.Placeholder)]
    if not marks:
        return ()
    if not positional:
        return tuple(sorted({names.index(str(p.name)) + 1 for p in marks}))
    # ``?`` is numbered by its place in the text, which the tree does not keep: render a copy
    # with the pattern parameters replaced by an unguessable literal, and count in order.
    marker = f"sqlmem-pattern-{uuid.uuid4().hex}"
    copy = tree.copy()
    wanted = {id(p) for p in marks}
    for original, twin in zip(tree.walk(), copy.walk(), strict=True):
        if id(original) in wanted:
            twin.replace(exp.Literal.string(marker))
    numbers, seen = [], 0
    for token in sqlglot.tokenize(copy.sql(dialect=_DIALECT), read=_DIALECT):
        if token.token_type is TokenType.PLACEHOLDER and token.text == "?":
            seen += 1
        elif token.token_type is TokenType.STRING and token.text == marker:
            seen += 1
            numbers.append(seen)
    return tuple(numbers)


def _lead(sql: str) -> str:
    match = _LEAD.search(re.sub(r"--[^\n]*|/\*.*?\*/", " ", sql, flags=re.S))
    return match.group(0).upper() if match else "this"
