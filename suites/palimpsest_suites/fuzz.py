"""Schema-driven fuzzing of the live server: operations, variables and raw bodies.

Three generators, all from the introspected schema, drawn by Hypothesis:

- operations with inline arguments from ``hypothesis-graphql``, valid ones and ones with one
  schema violation (wrong type, missing argument, unknown enum value);
- every root field with all its arguments as variables, the values drawn from the input
  types (sometimes of the wrong type, strings with any code point, lone surrogates too);
- raw request bodies: JSON that is not an object, bytes that are not UTF-8, deep nesting,
  huge numbers.

Each goes to ``/graphql`` with one of a few tokens (or none). Whatever is sent, the server
must answer with coded errors: no ``INTERNAL``, no 5xx without a coded GraphQL error. The
tokens reach no GLOBAL scope, so fuzzing writes only into its own fresh tenant.
"""

from __future__ import annotations

import http.client
import json
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import graphql
import orjson
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis_graphql import Mode, from_schema, nodes

from palimpsest.identity import Role, Scope
from palimpsest.identity.tokens import TokenKeys, mint
from palimpsest_suites.attack.generate import Field, fields_of

MAX_EXAMPLES_KEPT = 20
THREE = [Scope.AGENT, Scope.USER, Scope.TENANT]
ANY_CHAR = st.characters(codec=None, exclude_categories=())  # lone surrogates included
TEXT = st.text(max_size=40) | st.text(ANY_CHAR, max_size=12)
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)


def _list_node(values: list[graphql.StringValueNode]) -> graphql.ValueNode:
    return nodes.List(list[graphql.ValueNode](values))


JSON_NODE = st.one_of(
    TEXT.map(nodes.String),
    st.integers(-(2**70), 2**70).map(nodes.Int),
    st.booleans().map(nodes.Boolean),
    st.lists(TEXT.map(nodes.String), max_size=3).map(_list_node),
)
INSTANT_NODE = (st.sampled_from(["2024", "2024-02-29", "2030-06-15T12:00:00Z"]) | TEXT).map(
    nodes.String
)
RAW_BODIES = [
    b'"x"',
    b"null",
    b"5",
    b"true",
    b"[]",
    b'{"query": 5}',
    b'{"query": "{ health }", "variables": []}',
    b"\xff\xfe{",
    b"[" * 1500 + b"]" * 1500,
    b'{"query": "{ health }", "variables": {"a": ' + b"9" * 5000 + b"}}",
    b'{"query": "query($k: String!) { memory(scope: USER, key: $k) { key } }", '
    b'"variables": {"k": "\\ud800"}}',
]


@dataclass
class Tally:
    operations: int = 0
    internal: int = 0
    untyped_5xx: int = 0
    uncoded_errors: int = 0
    succeeded: int = 0  # replies with data and no error: the operation ran through
    statuses: Counter[int] = field(default_factory=Counter)
    codes: Counter[str] = field(default_factory=Counter)
    examples: list[dict[str, Any]] = field(default_factory=list)

    def keep(self, problem: str, sent: bytes, status: int, body: bytes) -> None:
        if len(self.examples) < MAX_EXAMPLES_KEPT:
            self.examples.append(
                {
                    "problem": problem,
                    "status": status,
                    "sent": sent[:300].decode(errors="replace"),
                    "reply": body[:300].decode(errors="replace"),
                }
            )

    def check(self, sent: bytes, status: int, body: bytes) -> None:
        self.operations += 1
        self.statuses[status] += 1
        try:
            reply = orjson.loads(body)
        except orjson.JSONDecodeError:
            reply = None
        errors = reply.get("errors") if isinstance(reply, dict) else None
        if isinstance(reply, dict) and reply.get("data") and not errors:
            self.succeeded += 1
        if status >= 500 and not (errors and all(_code(e) for e in errors)):
            self.untyped_5xx += 1
            self.keep("untyped 5xx", sent, status, body)
        for e in errors or []:
            code = _code(e)
            self.codes[str(code)] += 1
            if code is None:
                self.uncoded_errors += 1
                self.keep("error without a code", sent, status, body)
            elif code == "INTERNAL":
                self.internal += 1
                self.keep("INTERNAL", sent, status, body)


def _code(error: Any) -> str | None:
    if not isinstance(error, dict):
        return None
    code = (error.get("extensions") or {}).get("code")
    return code if isinstance(code, str) else None


def tokens_for(keys: TokenKeys) -> list[str | None]:
    """A member with every non-global grant, an admin without GLOBAL, an isolated member."""
    tenant = f"fuzz-{secrets.token_hex(5)}"
    common: dict[str, Any] = {"tenant": tenant, "memory_scopes": THREE, "sql_scopes": THREE}
    return [
        mint(keys, user="u1", agent="a1", **common),
        mint(keys, user="adm", roles=[Role.ADMIN], **common),
        mint(keys, user="iso", agent="a2", isolated=True, **common),
        None,
    ]


def value_for(kind: graphql.GraphQLInputType, depth: int = 0) -> st.SearchStrategy[Any]:
    """JSON for a variable of this type: usually well typed, sometimes null or any JSON."""
    nullable = not isinstance(kind, graphql.GraphQLNonNull)
    inner = graphql.get_nullable_type(kind)
    base: st.SearchStrategy[Any]
    if isinstance(inner, graphql.GraphQLList):
        base = st.lists(value_for(inner.of_type, depth + 1), max_size=3)
    elif isinstance(inner, graphql.GraphQLEnumType):
        base = st.sampled_from(sorted(inner.values))
    elif isinstance(inner, graphql.GraphQLInputObjectType) and depth < 4:
        fields = inner.fields.items()
        required = {n: value_for(f.type, depth + 1) for n, f in fields if _required(f.type)}
        optional = {n: value_for(f.type, depth + 1) for n, f in fields if not _required(f.type)}
        base = st.fixed_dictionaries(required, optional=optional)
    else:
        name = getattr(inner, "name", "")
        base = {
            "Int": st.integers(-(2**31), 2**31 - 1) | st.integers(),
            "Float": st.floats(allow_nan=False, allow_infinity=False),
            "Boolean": st.booleans(),
            "JSON": JSON_VALUE,
        }.get(name, TEXT)
    wrong = st.sampled_from([None, 7, "x", [], {}]) if depth == 0 else st.nothing()
    return base | st.none() | wrong if nullable else base | wrong


def _required(kind: graphql.GraphQLInputType) -> bool:
    return isinstance(kind, graphql.GraphQLNonNull)


def with_variables(fields: list[Field]) -> st.SearchStrategy[bytes]:
    def body(f: Field) -> st.SearchStrategy[bytes]:
        names = list(f.args)
        document = f.document(names)
        variables = st.fixed_dictionaries({}, optional={n: value_for(f.args[n]) for n in names})
        return variables.map(lambda v: _encode({"query": document, "variables": v}))

    return st.sampled_from(fields).flatmap(body)


def _encode(payload: dict[str, Any]) -> bytes:
    # ensure_ascii writes a lone surrogate as a \ud800 escape, which is valid JSON text.
    return json.dumps(payload, ensure_ascii=True).encode()


def bodies(schema: graphql.GraphQLSchema) -> st.SearchStrategy[bytes]:
    scalars = {"JSON": JSON_NODE, "Instant": INSTANT_NODE}
    inline = st.one_of(
        from_schema(schema, custom_scalars=scalars, codec=None, mode=Mode.POSITIVE),
        from_schema(schema, custom_scalars=scalars, codec=None, mode=Mode.NEGATIVE),
    ).map(lambda doc: _encode({"query": doc}))
    raw = st.sampled_from(RAW_BODIES) | st.binary(max_size=64)
    return st.one_of(inline, with_variables(fields_of(schema)), raw)


class Target:
    """One keep-alive connection; reconnects when the server closes it."""

    def __init__(self, url: str) -> None:
        host, _, port = url.removeprefix("http://").partition(":")
        self.host, self.port = host, int(port)
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)

    def post(self, body: bytes, token: str | None) -> tuple[int, bytes]:
        headers = {"Content-Type": "application/json"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        for attempt in (1, 2):
            try:
                self.conn.request("POST", "/graphql", body, headers)
                response = self.conn.getresponse()
                return response.status, response.read()
            except (http.client.HTTPException, OSError):
                self.conn.close()
                self.conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.conn.close()


def introspect(target: Target, token: str) -> graphql.GraphQLSchema:
    query = graphql.get_introspection_query(descriptions=False)
    _, body = target.post(_encode({"query": query}), token)
    return graphql.build_client_schema(orjson.loads(body)["data"])


def run_fuzz(
    url: str, keys: TokenKeys, operations: int, seed: int | None, derandomize: bool = False
) -> dict[str, Any]:
    """Send ``operations`` generated requests; counts what the server must never answer."""
    target = Target(url)
    tokens = tokens_for(keys)
    first = tokens[0]
    assert first is not None
    schema = introspect(target, first)
    tally = Tally()
    started = time.perf_counter()

    @settings(
        max_examples=operations,
        deadline=None,
        database=None,
        derandomize=derandomize,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )
    @given(body=bodies(schema), token=st.sampled_from(tokens))
    def one(body: bytes, token: str | None) -> None:
        status, reply = target.post(body, token)
        tally.check(body, status, reply)

    try:
        (hypothesis_seed(seed)(one) if seed is not None and not derandomize else one)()
    finally:
        target.close()
    return {
        "operations": tally.operations,
        "internal": tally.internal,
        "untyped_5xx": tally.untyped_5xx,
        "uncoded_errors": tally.uncoded_errors,
        "succeeded": tally.succeeded,
        "seconds": round(time.perf_counter() - started, 1),
        "statuses": {str(k): v for k, v in sorted(tally.statuses.items())},
        "error_codes": dict(sorted(tally.codes.items())),
        "examples": tally.examples,
    }
