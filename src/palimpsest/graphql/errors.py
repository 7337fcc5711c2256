"""Turn raised errors into GraphQL errors with ``extensions.code``; mask everything else.

Strawberry logs every error with its message by default; messages can quote arguments,
so this schema logs only the code, the exception class and where it was raised.
"""

from __future__ import annotations

import logging
import traceback
import uuid

from graphql import GraphQLError
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
    original = error.original_error
    if isinstance(original, PalimpsestError):
        extensions = {"code": original.code.value, **original.details}
        log.info("refused operation=%s code=%s", operation, original.code.value)
    elif original is None:
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
    error.extensions = {**(error.extensions or {}), **extensions}
