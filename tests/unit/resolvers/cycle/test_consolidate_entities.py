"""The consolidator's view of a scope's entities (``consolidate._EntityView``) on a recording
executor: many word runs are matched against the scope's entities read whole, unless the
scope holds more than ``SCAN_ENTITIES``; few runs are sent as they are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from palimpsest.cypher.driver.executor import Row, Statement
from palimpsest.identity import Scope, resolve_scope
from palimpsest.ontology.extractors import KnownEntity
from palimpsest.resolvers.cycle.consolidate import SCAN_ENTITIES, _EntityView
from tests.unit.principals import principal
from tests.unit.recording import services

ADA = {"type": "person", "name": "Ada", "norm": "ada", "aliases": ["the countess"]}
BOB = {"type": "person", "name": "Bob", "norm": "bob", "aliases": []}


def scope_of(count: int) -> Any:
    """A scope of Ada, Bob and ``count - 2`` other entities."""

    def answer(statement: Statement, params: dict[str, Any]) -> list[Row]:
        if statement.name == "SCOPE_ENTITY_NAMES":
            others = [{**BOB, "name": f"P{i}", "norm": f"p{i}"} for i in range(count - 2)]
            return [ADA, BOB, *others][: params["limit"]]
        assert statement.name == "ENTITIES_NAMED", statement.name
        return [{**BOB, "aliases": []}] if "bob" in params["names"] else []

    return answer


RUNS = {f"run {i}" for i in range(SCAN_ENTITIES)} | {"the countess", "bob"}


async def test_many_runs_are_matched_against_the_scope_read_whole(tmp_path: Path) -> None:
    svc, recorder = services(scope_of(10), tmp_path)
    view = _EntityView(svc, resolve_scope(principal(), Scope.USER))
    found = await view.entities_named(RUNS)
    assert recorder.names() == ["SCOPE_ENTITY_NAMES"]
    # As ENTITIES_NAMED answers: by name without aliases, by alias with them.
    assert found == [
        KnownEntity("person", "Ada", "ada", ("the countess",)),
        KnownEntity("person", "Bob", "bob"),
    ]


async def test_a_larger_scope_or_fewer_runs_send_the_runs(tmp_path: Path) -> None:
    svc, recorder = services(scope_of(SCAN_ENTITIES + 5), tmp_path)
    view = _EntityView(svc, resolve_scope(principal(), Scope.USER))
    assert await view.entities_named(RUNS) == [KnownEntity("person", "Bob", "bob")]
    assert recorder.names() == ["SCOPE_ENTITY_NAMES", "ENTITIES_NAMED"]
    svc, recorder = services(scope_of(10), tmp_path)
    view = _EntityView(svc, resolve_scope(principal(), Scope.USER))
    assert await view.entities_named({"bob"}) == [KnownEntity("person", "Bob", "bob")]
    assert recorder.names() == ["ENTITIES_NAMED"]
