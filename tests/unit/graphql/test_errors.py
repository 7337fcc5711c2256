from __future__ import annotations

from graphql import GraphQLError, parse

from palimpsest.errors import QuotaExceeded
from palimpsest.graphql.errors import annotate


def test_domain_errors_carry_their_code_and_details() -> None:
    error = GraphQLError("x", original_error=QuotaExceeded("too big", limit=10))
    annotate(error, None)
    assert error.extensions == {"code": "QUOTA_EXCEEDED", "limit": 10}


def test_malformed_requests_are_invalid_arguments() -> None:
    error = GraphQLError("Unknown argument")
    annotate(error, None)
    assert error.extensions == {"code": "INVALID_ARGUMENT"}


def test_unexpected_errors_are_masked() -> None:
    error = GraphQLError("boom", original_error=RuntimeError("value=secret"))
    annotate(error, None)
    assert error.message.startswith("internal error (request id ")
    assert error.extensions is not None
    assert error.extensions["code"] == "INTERNAL"
    assert "secret" not in str(error.formatted)


def test_variable_coercion_errors_are_invalid_arguments_naming_the_variable() -> None:
    # How graphql-core reports a bad variable: its error wraps the value's error.
    node = parse("query($s: Scope!) { health }").definitions[0].variable_definitions[0]  # type: ignore[attr-defined]
    inner = GraphQLError("Value 'NOPE' does not exist in 'Scope' enum.")
    error = GraphQLError(
        "Variable '$s' has invalid value: Value 'NOPE' does not exist in 'Scope' enum.",
        node,
        original_error=inner,
    )
    annotate(error, None)
    assert error.extensions == {"code": "INVALID_ARGUMENT", "variable": "s"}
    scalar = GraphQLError(
        "Variable '$s' has invalid value: bad", node, original_error=ValueError("bad")
    )
    annotate(scalar, None)
    assert scalar.extensions == {"code": "INVALID_ARGUMENT", "variable": "s"}


def test_a_domain_error_under_a_variable_keeps_its_code() -> None:
    node = parse("query($v: JSON!) { health }").definitions[0].variable_definitions[0]  # type: ignore[attr-defined]
    cause = GraphQLError("too big", original_error=QuotaExceeded("too big", limit=10))
    error = GraphQLError("Variable '$v' has invalid value: too big", node, original_error=cause)
    annotate(error, None)
    assert error.extensions == {"code": "QUOTA_EXCEEDED", "limit": 10, "variable": "v"}


def test_a_value_the_server_cannot_serialise_stays_internal() -> None:
    # Returning 2**40 from an Int field is a server fault, even though graphql-core words it
    # as a GraphQLError; it carries a path because it happens while executing.
    cause = GraphQLError("Int cannot represent non 32-bit signed integer value: 1099511627776")
    error = GraphQLError(cause.message, path=["me", "count"], original_error=cause)
    annotate(error, None)
    assert error.extensions is not None
    assert error.extensions["code"] == "INTERNAL"
    unexpected = GraphQLError("boom", original_error=RuntimeError("boom"))  # no path either
    annotate(unexpected, None)
    assert unexpected.extensions is not None
    assert unexpected.extensions["code"] == "INTERNAL"
