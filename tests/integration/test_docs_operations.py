"""Every example operation in docs/operations runs against the real server, without errors.

Each file runs in a fresh tenant, operations in file order. A line ``#> name = a.0.b`` after an
operation keeps that value of its answer as variable ``$name`` for the operations after it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import OperationDefinitionNode, parse

from palimpsest.identity import Scope

DOCS = Path(__file__).resolve().parents[2] / "docs" / "operations"
FILES = sorted(DOCS.glob("*.graphql"))
CAPTURE = re.compile(r"^#>\s*(\w+)\s*=\s*([\w.]+)\s*$", re.M)


def _dig(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def test_every_plane_has_examples() -> None:
    names = {f.stem for f in FILES}
    assert {"memory", "sql", "documents", "facts", "recall", "ontology", "identity"} <= names


@pytest.mark.parametrize("path", FILES, ids=[f.stem for f in FILES])
def test_example_operations_run(path: Path, http: httpx.Client, token: Callable[..., str]) -> None:
    source = path.read_text()
    document = parse(source)
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    assert operations, f"{path.name} holds no operation"
    raw = token(
        f"t-docs-{uuid.uuid4().hex[:8]}",
        "docs-user",
        "docs-agent",
        admin=True,
        memory_scopes=[Scope.AGENT, Scope.USER, Scope.TENANT],
        sql_scopes=[Scope.USER, Scope.TENANT],
    )
    kept: dict[str, Any] = {}
    for i, op in enumerate(operations):
        assert op.name is not None, f"{path.name}: give every operation a name"
        assert op.loc is not None
        following = operations[i + 1].loc if i + 1 < len(operations) else None
        end = following.start if following is not None else len(source)
        wanted = [v.variable.name.value for v in op.variable_definitions or ()]
        response = http.post(
            "/graphql",
            json={
                "query": source,
                "operationName": op.name.value,
                "variables": {k: kept[k] for k in wanted},
            },
            headers={"Authorization": f"Bearer {raw}"},
        )
        body = response.json()
        assert "errors" not in body, f"{path.name} {op.name.value}: {body.get('errors')}"
        assert body["data"], f"{path.name} {op.name.value} answered no data"
        for name, where in CAPTURE.findall(source[op.loc.end : end]):
            kept[name] = _dig(body["data"], where)
