"""Turn raised errors into GraphQL errors with ``extensions.code``; mask everything else.

Strawberry logs every error with its message by default; messages can quote arguments,
so this schema logs only the code, the exception class and where it was raised.
"""

from __future__ import annotations

import logging
import traceback
import uuid
from typing import Any

from graphql import GraphQLError, VariableDefinitionNode
from strawberry import Schema
from strawberry.types import ExecutionContext

from palimpsest.errors import ErrorCode, PalimpsestError

log = logging.getLogger("palimpsest.graphql")


class CodedSchema(Schema):
    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        operation = execution_context.operation_name if execution_context else None
        for error in errors:
            annotate(error, operation)


def annotate(error: GraphQLError, operation: str | None) -> None:
    original = _innermost(error.original_error)
    extensions: dict[str, Any]
    if isinstance(original, PalimpsestError):
        extensions = {"code": original.code.value, **original.details}
        log.info("refused operation=%s code=%s", operation, original.code.value)
    elif original is None or _is_request_error(error, original):
        # Parse, validation and variable-coercion errors: the request itself is malformed.
        extensions = {"code": ErrorCode.INVALID_ARGUMENT.value}
        log.info("invalid request operation=%s", operation)
    else:
        request_id = uuid.uuid4().hex[:12]
        where = " <- ".join(
            f"{frame.filename.rsplit('/', 1)[-1]}:{frame.lineno}"
            for frame in reversed(traceback.extract_tb(original.__traceback__)[-4:])
        )
        log.error(
            "internal error request_id=%s operation=%s type=%s at %s",
            request_id,
            operation,
            type(original).__name__,
            where,
        )
        error.message = f"internal error (request id {request_id})"
        extensions = {"code": ErrorCode.INTERNAL.value, "requestId": request_id}
    variable = _variable(error)
    if variable is not None and extensions["code"] != ErrorCode.INTERNAL:
        extensions["variable"] = variable
    error.extensions = {**(error.extensions or {}), **extensions}


def _innermost(error: BaseException | None) -> BaseException | None:
    # graphql-core wraps coercion failures in GraphQLErrors (a variable's error holds the
    # value's error, which may hold the scalar's); the innermost cause decides the code.
    while isinstance(error, GraphQLError) and error.original_error is not None:
        error = error.original_error
    return error


def _is_request_error(error: GraphQLError, cause: BaseException) -> bool:
    """A variable or argument the caller sent that does not coerce (not a server fault)."""
    if _variable(error) is not None:
        return True  # "Variable '$x' ...", whatever the scalar raised underneath
    if not isinstance(cause, GraphQLError):
        return False
    # graphql-core's own coercion messages. During execution only argument coercion words
    # its errors this way; a value the server fails to serialise stays INTERNAL.
    return error.path is None or error.message.startswith("Argument ")


def _variable(error: GraphQLError) -> str | None:
    for node in error.nodes or ():
        if isinstance(node, VariableDefinitionNode):
            return node.variable.name.value
    return None
