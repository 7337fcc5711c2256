"""A recording executor: resolvers run unchanged, no Cypher reaches a server.

Each statement a resolver runs is recorded (name, parameters, read or write) and answered by
the test's ``answer`` function, so a unit test can script what the database says and check
what the resolver asked for, including the scope parameters the handle injected.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Database, RawRun, Row, Statement
from palimpsest.embedding import Vector
from palimpsest.resolvers.services import Services
from palimpsest.sqlmem import SqliteStore

T = TypeVar("T")
Answer = Callable[[Statement, dict[str, Any]], list[Row]]
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    params: dict[str, Any]
    write: bool


@dataclass
class RecordingExecutor:
    answer: Answer
    calls: list[Call] = field(default_factory=list)
    transactions: list[list[str]] = field(default_factory=list)  # statement names per tx

    async def execute(
        self, work: Callable[[RawRun], Awaitable[T]], *, write: bool, single: bool = False
    ) -> T:
        names: list[str] = []
        self.transactions.append(names)

        async def run(statement: Statement, params: dict[str, Any]) -> list[Row]:
            assert not (single and names), "a single-statement read ran a second statement"
            self.calls.append(Call(statement.name, params, write))
            names.append(statement.name)
            return self.answer(statement, params)

        return await work(run)

    async def ping(self) -> None:
        return None

    def names(self) -> list[str]:
        return [c.name for c in self.calls]


def one_server() -> Database:
    """A database that answers nothing: for fakes of ``Services`` whose code under test only
    asks how many servers there are (``Database.everywhere``)."""
    return Database(RecordingExecutor(lambda _s, _p: []))


class ConstantEmbedder:
    """Every text gets the same unit vector: the planner, not the model, is under test."""

    model_name = "constant"
    dimensions = 4

    def embed(self, texts: Sequence[str]) -> list[Vector]:
        return [Vector([1.0, 0.0, 0.0, 0.0]) for _ in texts]


def services(answer: Answer, tmp_path: Path, **settings: Any) -> tuple[Services, RecordingExecutor]:
    recorder = RecordingExecutor(answer)
    config = Settings(home=tmp_path, **settings)
    svc = Services(
        db=Database(recorder),
        embedder=ConstantEmbedder(),
        settings=config,
        sql=SqliteStore.from_settings(config),
        clock=lambda: NOW,
    )
    return svc, recorder
