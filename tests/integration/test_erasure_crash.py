"""An erasure whose database connection dies halfway finishes when re-run, or at start-up,
and its receipt counts what every attempt removed."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from neo4j import AsyncGraphDatabase, Driver
from neo4j.exceptions import DriverError, Neo4jError

from palimpsest.config import Settings
from palimpsest.cypher.driver.executor import Database, Neo4jExecutor, RawRun
from palimpsest.errors import PalimpsestError
from palimpsest.identity import Principal, Role
from palimpsest.identity.principal import console_operator
from palimpsest.local.neo4j import credentials
from palimpsest.resolvers.erasure import erase as erasure
from palimpsest.resolvers.erasure import jobs
from palimpsest.resolvers.services import Services
from palimpsest.sqlmem import SqliteStore
from tests.integration import people
from tests.integration.answers import ok
from tests.integration.conftest import Gql
from tests.integration.people import Person, by_label, count
from tests.integration.test_erasure import ERASE_USER, ERASURES, assert_nothing_left
from tests.unit.recording import ConstantEmbedder

T = TypeVar("T")
CRASHES = (PalimpsestError, DriverError, Neo4jError, OSError)


@dataclass
class DyingExecutor:
    """The real transport, whose driver is closed for good after ``writes`` transactions:
    everything after that fails the way a lost Neo4j connection does."""

    inner: Neo4jExecutor
    writes: int

    async def execute(
        self, work: Callable[[RawRun], Awaitable[T]], *, write: bool, single: bool = False
    ) -> T:
        if write:
            if self.writes == 0:
                await self.inner.driver.close()
            self.writes -= 1
        return await self.inner.execute(work, write=write, single=single)

    async def ping(self) -> None:
        await self.inner.ping()


def admin_of(tenant: str) -> Principal:
    return console_operator(tenant)


async def erase_until_death(settings: Settings, who: Principal, user: str, writes: int) -> None:
    driver = AsyncGraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
    executor = DyingExecutor(Neo4jExecutor(driver, settings.neo4j.database), writes)
    svc = Services(
        db=Database(executor),
        embedder=ConstantEmbedder(),
        settings=settings.replace(erasure_batch=2),
        sql=SqliteStore.from_settings(settings),
    )
    try:
        with pytest.raises(CRASHES):
            await erasure.erase_user(svc, who, user)
    finally:
        await driver.close()


def expected(driver: Driver, p: Person) -> dict[str, int]:
    labels = by_label(driver, p.key)
    return {"entries": labels["Memory"], "chunks": labels["Chunk"], "spans": labels["PendingSpan"]}


@pytest.fixture
def org(gql: Gql, token: Callable[..., str], neo4j_driver: Driver) -> dict[str, Any]:
    tenant, admin = people.new_org(gql, token, "crash")
    alice = people.plant(gql, token, neo4j_driver, tenant, "alice")
    return {"tenant": tenant, "admin": admin, "alice": alice}


def test_rerunning_an_interrupted_erasure_finishes_it_with_every_attempt_counted(
    gql: Gql, org: dict[str, Any], neo4j_driver: Driver, settings: Settings
) -> None:
    alice = org["alice"]
    want = expected(neo4j_driver, alice)
    # The job record, then a few batches of two rows each, then the connection dies.
    asyncio.run(erase_until_death(settings, admin_of(org["tenant"]), alice.user, writes=6))
    [running] = ok(gql(ERASURES, org["admin"]))["erasures"]["items"]
    assert running["status"] == "RUNNING"
    assert sum(v for k, v in running["removed"].items() if k != "sqlBytes") > 0
    assert count(neo4j_driver, people.ROWS_OF_KEY, key=alice.key) > 0

    receipt = ok(gql(ERASE_USER, org["admin"], u=alice.user))["eraseUser"]
    assert receipt["id"] == running["id"]
    assert receipt["status"] == "DONE"
    assert receipt["attempts"] == 2
    assert receipt["requestedBy"] == "operator"  # who asked first
    removed = receipt["removed"]
    assert {k: removed[k] for k in want} == want
    assert removed["sqlDatabases"] == 1
    assert_nothing_left(neo4j_driver, settings, alice)


def test_the_server_finishes_an_interrupted_erasure_at_start_up(
    gql: Gql, org: dict[str, Any], neo4j_driver: Driver, settings: Settings
) -> None:
    alice = org["alice"]
    want = expected(neo4j_driver, alice)
    asyncio.run(erase_until_death(settings, admin_of(org["tenant"]), alice.user, writes=3))
    [running] = ok(gql(ERASURES, org["admin"]))["erasures"]["items"]
    assert (settings.home / "erasures" / f"{running['id']}.json").exists()

    async def start_up() -> list[jobs.Receipt]:
        driver = AsyncGraphDatabase.driver(settings.bolt_uri, auth=credentials(settings))
        try:
            svc = Services(
                db=Database(Neo4jExecutor(driver, settings.neo4j.database)),
                embedder=ConstantEmbedder(),
                settings=settings,
                sql=SqliteStore.from_settings(settings),
            )
            return await erasure.resume_pending(svc)
        finally:
            await driver.close()

    finished = [r for r in asyncio.run(start_up()) if r.id == running["id"]]
    assert [(r.status, r.attempts) for r in finished] == [("done", 2)]
    removed = finished[0].removed
    assert (removed.entries, removed.chunks, removed.spans) == (
        want["entries"],
        want["chunks"],
        want["spans"],
    )
    assert not (settings.home / "erasures" / f"{running['id']}.json").exists()
    assert_nothing_left(neo4j_driver, settings, alice)
    assert Role.ADMIN in admin_of("x").roles
