from __future__ import annotations

from graphql import GraphQLError

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
