"""What a GraphQL answer says, read one way by every integration test: ``ok`` (no errors; the
data) and ``code_of`` / ``only_code_of`` (the refusal's code)."""

from __future__ import annotations

from typing import Any


def ok(body: dict[str, Any]) -> dict[str, Any]:
    """The answer's data; fails, showing the answer, when it carries any error."""
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def code_of(body: dict[str, Any]) -> str:
    """The code of the answer's first error."""
    return str(body["errors"][0]["extensions"]["code"])


def only_code_of(body: dict[str, Any]) -> str:
    """The code of the answer's one error; fails when there are more."""
    [error] = body["errors"]
    return str(error["extensions"]["code"])
