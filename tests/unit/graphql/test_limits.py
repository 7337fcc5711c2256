"""The edge limits as pure functions: shape, cost, the tokenless gate, and ``prepare``."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import (
    FragmentDefinitionNode,
    GraphQLFormattedError,
    OperationDefinitionNode,
    get_introspection_query,
    parse,
)

from palimpsest.errors import InvalidArgument, QuotaExceeded
from palimpsest.graphql.errors import annotate
from palimpsest.graphql.limits import (
    Cost,
    EdgeLimits,
    Shape,
    anonymous_document,
    check_cost,
    check_shape,
    cost,
    measure,
    prepare,
)
from palimpsest.graphql.schema import build_schema

LIMITS = EdgeLimits()
SCHEMA = build_schema()._schema
# What GraphiQL sends to draw its docs and autocomplete, with every option it may turn on.
INTROSPECTION = get_introspection_query(
    descriptions=True,
    specified_by_url=True,
    directive_is_repeatable=True,
    schema_description=True,
    input_value_deprecation=True,
    experimental_directive_deprecation=True,
    one_of=True,
)


def op_cost(query: str, **variables: Any) -> Cost:
    document = parse(query)
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    [op] = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    return cost(SCHEMA, op, fragments, variables)


def repeated_fields(n: int) -> str:
    return "{ " + " ".join("me { tenant }" for _ in range(n)) + " }"


def many_fragments(n: int) -> str:
    # Each fragment spreads the next twice: naive expansion would be 2^n fields.
    spreads = [
        f"fragment F{i} on Query {{ me {{ tenant }} ...F{i + 1} ...F{i + 1} }}" for i in range(n)
    ]
    return "{ ...F0 } " + " ".join(spreads) + f" fragment F{n} on Query {{ health }}"


def test_shape_counts_depth_fields_and_aliases_through_fragments() -> None:
    document = parse(
        "query { a: me { tenant } ...M }"
        " fragment M on Query { b: me { tenant ... on Me { user } } }"
    )
    # depth: me -> tenant; fields: a, tenant, spread M, b, tenant, user; aliases: a, b.
    assert measure(document) == Shape(depth=2, fields=6, aliases=2)


def test_shape_measures_each_fragment_once_however_often_it_is_spread() -> None:
    shape = measure(parse(many_fragments(600)))
    # The expanded count is astronomically large; it is computed, not walked.
    assert shape.fields > 2**600
    with pytest.raises(InvalidArgument) as refused:
        check_shape(shape, LIMITS)
    assert refused.value.details["limit"] == "maxQueryFields"


@pytest.mark.parametrize(
    ("shape", "limit"),
    [
        (Shape(depth=21, fields=20, aliases=0), "maxQueryDepth"),
        (Shape(depth=3, fields=40, aliases=31), "maxQueryAliases"),
        (Shape(depth=3, fields=301, aliases=0), "maxQueryFields"),
    ],
)
def test_shape_limits_name_the_limit_and_numbers(shape: Shape, limit: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        check_shape(shape, LIMITS)
    details = refused.value.details
    assert details["limit"] == limit
    assert details["found"] > details["allowed"]
    assert str(details["allowed"]) in refused.value.message


def test_shape_at_the_limits_passes() -> None:
    check_shape(Shape(depth=20, fields=300, aliases=30), LIMITS)


def test_cost_counts_root_fields_once_per_response_key() -> None:
    found = op_cost("{ health health a: health ...F } fragment F on Query { health b: health }")
    assert found.root_fields == 3  # health, a, b


def test_cost_of_search_and_recall_follows_sources_and_scopes() -> None:
    assert op_cost('{ search(scope: USER, query: "q") { scopes } }') == Cost(1, 1, 6)
    assert op_cost('{ recall(scope: USER, query: "q") { scopes } }') == Cost(1, 1, 4)
    narrowed = (
        '{ recall(scope: USER, query: "q", sources: [FACTS], alsoScopes: [USER]) { scopes } }'
    )
    assert op_cost(narrowed) == Cost(1, 1, 2)
    wide = (
        'query($also: [Scope!]) { search(scope: USER, query: "q", alsoScopes: $also) { scopes } }'
    )
    assert op_cost(wide, also=["TENANT", "AGENT", "TENANT"]) == Cost(1, 1, 18)
    # A variable the request does not carry counts at its worst: 3 sources x 4 scopes x 2 legs.
    assert op_cost(wide) == Cost(1, 1, 24)


def test_cost_of_embedding_writes() -> None:
    mutation = (
        'mutation($e: Boolean!) { a: memorySet(scope: USER, key: "a", value: 1) { key }'
        ' b: memorySet(scope: USER, key: "b", value: 1, embed: true) { key }'
        ' c: memorySet(scope: USER, key: "c", value: 1, embed: $e) { key }'
        ' d: memoryIncrement(scope: USER, key: "d") { key }'
        ' e: importDocument(scope: USER, markdown: "# x") { id } }'
    )
    assert op_cost(mutation, e=False) == Cost(5, 3, 0)
    assert op_cost(mutation, e=True) == Cost(5, 4, 0)
    graph = '{ graphRecall(scope: USER, query: "q") { facts { id } } }'
    assert op_cost(graph) == Cost(1, 1, 1)
    seeds = '{ graphRecall(scope: USER, seedIds: ["x"]) { facts { id } } }'
    assert op_cost(seeds) == Cost(1, 0, 0)


@pytest.mark.parametrize(
    ("found", "limit"),
    [
        (Cost(21, 0, 0), "maxRootFields"),
        (Cost(11, 11, 0), "maxOperationEmbeddings"),
        (Cost(3, 3, 72), "maxOperationIndexCalls"),
    ],
)
def test_cost_limits_are_quota_refusals_naming_the_numbers(found: Cost, limit: str) -> None:
    with pytest.raises(QuotaExceeded) as refused:
        check_cost(found, LIMITS)
    details = refused.value.details
    assert details["limit"] == limit
    assert details["requested"] > details["allowed"]
    assert f"asks for {details['requested']}" in refused.value.message


@pytest.mark.parametrize(
    "query",
    ["{ health }", "query { health __typename }", "query Ping { ok: health }", INTROSPECTION],
)
def test_tokenless_callers_may_run_health_typename_and_introspection(query: str) -> None:
    assert anonymous_document(query, LIMITS) is not None


@pytest.mark.parametrize(
    "query",
    [
        "{ me { tenant } }",
        "{ health me { tenant } }",
        "{ ...F } fragment F on Query { me { tenant } }",
        "{ ... on Query { me { tenant } } }",
        'mutation { memoryDelete(scope: USER, key: "k") { deleted } }',
        "{ health } mutation M { __typename }",
        "{ health",
        "{ " + "health " * 500 + "}",  # over the token budget for tokenless documents
        "{ health }" + " " * 5000,  # over the byte budget
        repeated_fields(500),
        many_fragments(600),
    ],
)
def test_tokenless_callers_get_nothing_else(query: str) -> None:
    assert anonymous_document(query, LIMITS) is None


def test_prepare_admits_introspection_under_the_default_limits() -> None:
    document, errors = prepare(SCHEMA, INTROSPECTION, None, LIMITS)
    assert errors == []
    assert document is not None


def errors_of(
    query: str, limits: EdgeLimits = LIMITS, **variables: Any
) -> list[GraphQLFormattedError]:
    document, errors = prepare(SCHEMA, query, variables, limits)
    assert document is None
    for error in errors:
        annotate(error, None)
    return [e.formatted for e in errors]


def test_prepare_refuses_the_attack_documents_before_validation() -> None:
    [repeated] = errors_of(repeated_fields(500))
    assert repeated["extensions"]["code"] == "INVALID_ARGUMENT"
    assert repeated["extensions"]["limit"] == "maxQueryFields"
    # 600 fragments do not even fit the token budget; with a bigger budget the field count
    # refuses them, still before validation.
    [fragments] = errors_of(many_fragments(600))
    assert fragments["extensions"]["limit"] == "maxQueryTokens"
    roomy = EdgeLimits(max_tokens=100_000)
    [fragments] = errors_of(many_fragments(600), roomy)
    assert fragments["extensions"]["code"] == "INVALID_ARGUMENT"
    assert fragments["extensions"]["limit"] == "maxQueryFields"


def test_fragments_spread_side_by_side_are_refused_before_validation() -> None:
    spreads = " ".join(f"...F{i}" for i in range(600))
    defs = " ".join(f"fragment F{i} on Query {{ me {{ tenant }} }}" for i in range(600))
    [error] = errors_of("{ " + spreads + " } " + defs, EdgeLimits(max_tokens=100_000))
    assert error["extensions"]["limit"] == "maxQueryFields"
    assert error["extensions"]["found"] == 600 * 3


def test_a_long_fragment_chain_is_measured_without_deep_recursion() -> None:
    chain = " ".join(f"fragment F{i} on Query {{ ...F{i + 1} }}" for i in range(3000))
    shape = measure(parse("{ ...F0 } " + chain + " fragment F3000 on Query { me { tenant } }"))
    assert shape == Shape(depth=2, fields=3001 + 2, aliases=0)


def test_cyclic_and_unknown_fragments_are_left_to_validation() -> None:
    cyclic = "{ ...A } fragment A on Query { health ...B } fragment B on Query { ...A }"
    assert measure(parse(cyclic)).fields == 4  # spread A, health, spread B, spread A
    [error] = errors_of(cyclic)
    assert error["extensions"] == {"code": "INVALID_ARGUMENT"}
    assert "Cannot spread fragment" in error["message"]
    [error] = errors_of("{ ...Missing }")
    assert "Unknown fragment" in error["message"]


def test_prepare_stops_parsing_at_the_token_budget() -> None:
    [error] = errors_of("{ " + "health " * 6000 + "}")
    assert error["extensions"] == {
        "code": "INVALID_ARGUMENT",
        "limit": "maxQueryTokens",
        "allowed": LIMITS.max_tokens,
    }


def test_prepare_refuses_cost_before_validation() -> None:
    searches = " ".join(f'a{i}: search(scope: USER, query: "q") {{ scopes }}' for i in range(200))
    [error] = errors_of("{ " + searches + " }")  # 200 aliases too, but cost is checked first
    assert error["extensions"]["code"] == "QUOTA_EXCEEDED"
    assert error["extensions"]["limit"] == "maxRootFields"
    assert error["extensions"]["requested"] == 200


def test_prepare_returns_validation_errors_coded() -> None:
    [error] = errors_of("{ nosuchfield }")
    assert error["extensions"] == {"code": "INVALID_ARGUMENT"}
    assert "nosuchfield" in error["message"]


def test_literals_a_scalar_cannot_convert_are_invalid_arguments() -> None:
    # int() of a 5000-digit literal raises ValueError inside validation.
    query = 'mutation { memorySet(scope: USER, key: "k", value: 1, ttlSeconds: %s) { key } }'
    [error] = errors_of(query % ("9" * 5000))
    assert error["extensions"] == {"code": "INVALID_ARGUMENT"}
    assert "Int" in error["message"]


def test_every_field_that_embeds_or_searches_declares_its_cost() -> None:
    """The cost lives with the field: the fields whose resolvers embed or search all carry a
    spec, and no other root field does (a field that forgot its cost would be free)."""
    from palimpsest.graphql.cost import cost_of

    declared = {
        name
        for root in (SCHEMA.query_type, SCHEMA.mutation_type)
        if root is not None
        for name, field in root.fields.items()
        if cost_of(field) is not None
    }
    assert declared == {
        "recall",
        "search",
        "context",
        "graphRecall",
        "entityDuplicates",
        "memorySet",
        "memoryIncrement",
        "memoryMerge",
        "memoryAppendDedupe",
        "memoryBoundedList",
        "importDocument",
        "importDocuments",
        "updateChunk",
        "assertFacts",
        "updateMemoryFile",
        "storeSearch",
    }
