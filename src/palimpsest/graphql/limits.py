"""Limits at the GraphQL edge: what a document may look like and what one operation may cost.

Everything here is a pure function of the request, run before the costly steps: parsing stops
at a token budget, the shape and cost checks walk the syntax tree once (each fragment is
measured once and remembered, so nested spreads cannot multiply the work), and only documents
that pass are validated. The view runs ``prepare`` on a worker thread, never on the event loop.

Shape limits (tokens, depth, aliases, fields) refuse with ``INVALID_ARGUMENT``; cost limits
(root fields, embedding calls, index calls) with ``QUOTA_EXCEEDED``. Both name the limit, the
allowed number and the number found in ``extensions``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from graphql import (
    DocumentNode,
    FieldNode,
    FragmentDefinitionNode,
    FragmentSpreadNode,
    GraphQLError,
    GraphQLSchema,
    InlineFragmentNode,
    OperationDefinitionNode,
    OperationType,
    SelectionSetNode,
    Undefined,
    parse,
    specified_rules,
)
from graphql.utilities import value_from_ast_untyped
from strawberry.schema.schema import validate_document

from palimpsest.config import Settings
from palimpsest.errors import InvalidArgument, PalimpsestError, QuotaExceeded
from palimpsest.graphql.cost import UNKNOWN, cost_of

# Without a token only these root fields are served: liveness and the (public) schema.
ANONYMOUS_FIELDS = frozenset({"health", "__typename", "__schema", "__type"})

# The name each refusal carries in ``extensions.limit``, and the setting that changes it.
SETTINGS = {
    "maxQueryTokens": "PALIMPSEST_MAX_QUERY_TOKENS",
    "maxQueryDepth": "PALIMPSEST_MAX_QUERY_DEPTH",
    "maxQueryAliases": "PALIMPSEST_MAX_QUERY_ALIASES",
    "maxQueryFields": "PALIMPSEST_MAX_QUERY_FIELDS",
    "maxRootFields": "PALIMPSEST_MAX_ROOT_FIELDS",
    "maxOperationEmbeddings": "PALIMPSEST_MAX_OPERATION_EMBEDDINGS",
    "maxOperationIndexCalls": "PALIMPSEST_MAX_OPERATION_INDEX_CALLS",
}


@dataclass(frozen=True, slots=True)
class EdgeLimits:
    max_request_bytes: int = 16 * 1024 * 1024
    anonymous_max_bytes: int = 4096
    anonymous_max_tokens: int = 400
    max_tokens: int = 5000
    max_depth: int = 20
    max_aliases: int = 30
    max_fields: int = 300
    max_root_fields: int = 20
    max_embeddings: int = 10
    max_index_calls: int = 60

    @classmethod
    def of(cls, s: Settings) -> EdgeLimits:
        return cls(
            max_request_bytes=s.limits.max_request_bytes,
            anonymous_max_bytes=s.limits.anonymous_max_bytes,
            anonymous_max_tokens=s.limits.anonymous_max_tokens,
            max_tokens=s.limits.max_query_tokens,
            max_depth=s.limits.max_query_depth,
            max_aliases=s.limits.max_query_aliases,
            max_fields=s.limits.max_query_fields,
            max_root_fields=s.limits.max_root_fields,
            max_embeddings=s.limits.max_operation_embeddings,
            max_index_calls=s.limits.max_operation_index_calls,
        )


@dataclass(frozen=True, slots=True)
class Shape:
    depth: int = 0
    fields: int = 0  # fields and fragment spreads, fragments expanded
    aliases: int = 0


@dataclass(frozen=True, slots=True)
class Cost:
    root_fields: int = 0
    embeddings: int = 0
    index_calls: int = 0


def anonymous_document(query: str, limits: EdgeLimits) -> DocumentNode | None:
    """The parsed document when a caller without a token may run it, else None.

    Only tiny documents are even parsed (a byte and a token budget), and every operation must
    be a query whose root fields are all in ``ANONYMOUS_FIELDS``.
    """
    if len(query) > limits.anonymous_max_bytes or len(query.encode()) > limits.anonymous_max_bytes:
        return None
    try:
        document = parse(query, max_tokens=limits.anonymous_max_tokens)
    except (GraphQLError, RecursionError):
        return None
    fragments = fragments_of(document)
    operations = operations_of(document)
    if not operations:
        return None
    for op in operations:
        if op.operation is not OperationType.QUERY:
            return None
        if any(f.name.value not in ANONYMOUS_FIELDS for f in root_fields(op, fragments)):
            return None
    return document


def prepare(
    schema: GraphQLSchema,
    query: str,
    variables: Mapping[str, Any] | None,
    limits: EdgeLimits,
    document: DocumentNode | None = None,
) -> tuple[DocumentNode | None, list[GraphQLError]]:
    """Parse (within the token budget), check shape and cost, validate.

    Returns the document ready to execute, or None and the errors to answer with.
    """
    try:
        if document is None:
            document = parse(query, max_tokens=limits.max_tokens)
        fragments = fragments_of(document)
        for op in operations_of(document):
            check_cost(cost(schema, op, fragments, variables or {}), limits)
        check_shape(measure(document), limits)
        errors = [_located(e) for e in validate_document(schema, document, tuple(specified_rules))]
    except GraphQLError as e:
        return None, [_name_token_limit(e, limits)]
    except PalimpsestError as e:
        return None, [GraphQLError(e.message, original_error=e)]
    except RecursionError:  # a safety net: the parser and ``measure`` bound their recursion
        refusal = InvalidArgument("the document nests too deeply")
        return None, [GraphQLError(refusal.message, original_error=refusal)]
    return (None, errors) if errors else (document, [])


def measure(document: DocumentNode) -> Shape:
    """Depth, fields and aliases of the whole document, each fragment counted where spread.

    Fragments are measured once each, in dependency order, so neither a long chain of
    fragments (no deep recursion) nor repeated spreads (no re-walking) cost more than a pass.
    """
    fragments = fragments_of(document)
    known: dict[str, Shape] = {}

    def selections(node: SelectionSetNode) -> Shape:
        # Recursion follows only fields and inline fragments, which the parser caps at
        # 200 levels; spreads read the fragment's measure.
        depth = fields = aliases = 0
        for sel in node.selections:
            if isinstance(sel, FieldNode):
                inner = selections(sel.selection_set) if sel.selection_set else Shape()
                depth = max(depth, inner.depth + 1)
                fields += 1 + inner.fields
                aliases += (sel.alias is not None) + inner.aliases
            else:
                if isinstance(sel, FragmentSpreadNode):
                    # Unknown or cyclic fragments count as empty; validation refuses them.
                    inner = known.get(sel.name.value, Shape())
                    fields += 1
                else:
                    assert isinstance(sel, InlineFragmentNode)
                    inner = selections(sel.selection_set)
                depth = max(depth, inner.depth)
                fields += inner.fields
                aliases += inner.aliases
        return Shape(depth, fields, aliases)

    for name in _dependency_order(fragments):
        known[name] = selections(fragments[name].selection_set)
    total = Shape()
    for op in operations_of(document):
        shape = selections(op.selection_set)
        total = Shape(
            max(total.depth, shape.depth),
            total.fields + shape.fields,
            total.aliases + shape.aliases,
        )
    return total


def _dependency_order(fragments: Mapping[str, FragmentDefinitionNode]) -> list[str]:
    """Fragment names, each after the fragments it spreads (edges closing a cycle skipped)."""
    order: list[str] = []
    state: dict[str, bool] = {}  # False while open, True once placed
    for root in fragments:
        if root in state:
            continue
        state[root] = False
        stack = [(root, iter(_spreads(fragments[root].selection_set)))]
        while stack:
            name, pending = stack[-1]
            child = next((c for c in pending if c in fragments and c not in state), None)
            if child is None:
                stack.pop()
                state[name] = True
                order.append(name)
            else:
                state[child] = False
                stack.append((child, iter(_spreads(fragments[child].selection_set))))
    return order


def _spreads(node: SelectionSetNode) -> list[str]:
    names: list[str] = []
    stack = [node]
    while stack:
        for sel in stack.pop().selections:
            if isinstance(sel, FragmentSpreadNode):
                names.append(sel.name.value)
            elif isinstance(sel, FieldNode | InlineFragmentNode) and sel.selection_set:
                stack.append(sel.selection_set)
    return names


def check_shape(shape: Shape, limits: EdgeLimits) -> None:
    for limit, what, found, allowed in (
        ("maxQueryDepth", "levels of nesting", shape.depth, limits.max_depth),
        ("maxQueryAliases", "aliases", shape.aliases, limits.max_aliases),
        ("maxQueryFields", "fields (fragments expanded)", shape.fields, limits.max_fields),
    ):
        if found > allowed:
            raise InvalidArgument(
                f"the document has {found} {what}; the limit is {allowed} ({SETTINGS[limit]})",
                limit=limit,
                allowed=allowed,
                found=found,
            )


def cost(
    schema: GraphQLSchema,
    op: OperationDefinitionNode,
    fragments: Mapping[str, FragmentDefinitionNode],
    variables: Mapping[str, Any],
) -> Cost:
    """What one operation asks for, by the cost each root field declares (``graphql/cost``);
    fields merged into one response key run once."""
    by_key = {(f.alias or f.name).value: f for f in root_fields(op, fragments)}
    root = schema.get_root_type(op.operation)
    embeddings = index_calls = 0
    for field in by_key.values():
        spec = cost_of(root.fields.get(field.name.value) if root else None)
        if spec is not None:
            e, i = spec.of(partial(_arg, field, variables=variables))
            embeddings += e
            index_calls += i
    return Cost(len(by_key), embeddings, index_calls)


def check_cost(found: Cost, limits: EdgeLimits) -> None:
    for limit, what, requested, allowed in (
        ("maxRootFields", "root fields", found.root_fields, limits.max_root_fields),
        ("maxOperationEmbeddings", "embedding calls", found.embeddings, limits.max_embeddings),
        (
            "maxOperationIndexCalls",
            "vector and full-text index calls",
            found.index_calls,
            limits.max_index_calls,
        ),
    ):
        if requested > allowed:
            raise QuotaExceeded(
                f"this operation asks for {requested} {what}; the limit per operation is "
                f"{allowed} ({SETTINGS[limit]}): split it into several requests",
                limit=limit,
                allowed=allowed,
                requested=requested,
            )


def root_fields(
    op: OperationDefinitionNode, fragments: Mapping[str, FragmentDefinitionNode]
) -> Iterator[FieldNode]:
    """The operation's root fields, looking through fragments (each fragment once)."""
    seen: set[str] = set()
    stack = list(reversed(op.selection_set.selections))
    while stack:
        sel = stack.pop()
        if isinstance(sel, FieldNode):
            yield sel
        elif isinstance(sel, InlineFragmentNode):
            stack.extend(reversed(sel.selection_set.selections))
        elif isinstance(sel, FragmentSpreadNode):
            name = sel.name.value
            if name not in seen and name in fragments:
                seen.add(name)
                stack.extend(reversed(fragments[name].selection_set.selections))


def _arg(field: FieldNode, name: str, *, variables: Mapping[str, Any]) -> Any:
    """The argument's value (None when absent), or ``UNKNOWN`` for a missing variable."""
    for arg in field.arguments or ():
        if arg.name.value == name:
            value = value_from_ast_untyped(arg.value, dict(variables))
            return UNKNOWN if value is Undefined else value
    return None


def fragments_of(document: DocumentNode) -> dict[str, FragmentDefinitionNode]:
    return {d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)}


def operations_of(document: DocumentNode) -> list[OperationDefinitionNode]:
    return [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]


def _located(error: GraphQLError) -> GraphQLError:
    """A validation error is about the document, whatever raised it underneath.

    A literal a scalar cannot convert (``ttlSeconds: 999...`` with 5000 digits makes ``int()``
    raise ValueError) arrives with that exception attached, which would read as INTERNAL.
    """
    cause = error.original_error
    if cause is None or isinstance(cause, PalimpsestError):
        return error
    return GraphQLError(error.message, error.nodes, extensions=error.extensions)


def _name_token_limit(error: GraphQLError, limits: EdgeLimits) -> GraphQLError:
    # graphql-core (pinned) words its budget refusal "Document contains more than N tokens".
    if f"more than {limits.max_tokens} tokens" in error.message:
        error.extensions = {"limit": "maxQueryTokens", "allowed": limits.max_tokens}
    return error
