"""Values through the short paths on the real Neo4j (cypher/driver/temporal_wire.py and
quiet_params.py): date-time parameters arrive as the same instants, stored date-times come
back as the driver's path would give them after ``records.convert`` (UTC, microseconds), named zones
included, and vector parameters arrive as lists."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from neo4j._async.io._bolt._bolt6 import AsyncBolt6x0

from palimpsest.cypher.driver import temporal_wire
from palimpsest.cypher.driver.executor import CrossScopeStatement
from palimpsest.resolvers.services import Services

ECHO = CrossScopeStatement(
    "TEST_ECHO_DATETIME",
    "RETURN $t AS t, toString($t) AS text, $t.epochSeconds AS s, $t.nanosecond AS ns",
)
STORED = CrossScopeStatement(
    "TEST_STORED_DATETIMES",
    """
RETURN datetime({epochSeconds: 1796183764, nanosecond: 123456789, timezone: '+05:30'}) AS offset,
       datetime({epochSeconds: -1, nanosecond: 999999999, timezone: 'Z'}) AS before_epoch,
       datetime({epochSeconds: 1796183764, nanosecond: 5, timezone: 'Europe/Paris'}) AS named,
       [datetime({epochSeconds: 0, timezone: '-08:00'})] AS listed
""",
)


async def test_parameters_arrive_as_the_same_instants(svc: Services) -> None:
    assert AsyncBolt6x0.HYDRATION_HANDLER_CLS is temporal_wire.Handler
    values = [
        datetime(2026, 12, 2, 4, 0, 1, 999_999, tzinfo=UTC),
        datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
        datetime(2026, 6, 1, 12, tzinfo=timezone(timedelta(hours=-7, minutes=-30))),
    ]
    for value in values:
        [row] = await svc.db.read(ECHO, {"t": value})
        epoch = value - datetime(1970, 1, 1, tzinfo=UTC)
        assert row["s"] == epoch.days * 86_400 + epoch.seconds
        assert row["ns"] == epoch.microseconds * 1000
        assert row["t"] == value
        assert row["t"].tzinfo is UTC


async def test_stored_values_come_back_in_utc_to_the_microsecond(svc: Services) -> None:
    [row] = await svc.db.read(STORED)
    # 1796183764 s after the epoch is 2026-12-02 03:56:04 UTC.
    assert row["offset"] == datetime(2026, 12, 2, 3, 56, 4, 123_456, tzinfo=UTC)
    assert row["before_epoch"] == datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
    assert row["named"] == datetime(2026, 12, 2, 3, 56, 4, tzinfo=UTC)
    for name in ("offset", "before_epoch", "named"):
        assert row[name].tzinfo is UTC
    assert row["listed"] == [datetime(1970, 1, 1, tzinfo=UTC)]


VECTOR_ECHO = CrossScopeStatement(
    "TEST_ECHO_VECTOR", "RETURN $v AS v, size($v) AS n, [r IN $rows | r.embedding[1]] AS second"
)


async def test_vector_parameters_arrive_as_lists(svc: Services) -> None:
    """``quiet_params.Numbers`` (what the executor sends vectors as) packs as a list."""
    vector = [i / 7 for i in range(384)]
    [row] = await svc.db.read(VECTOR_ECHO, {"v": vector, "rows": [{"embedding": vector}]})
    assert row == {"v": vector, "n": 384, "second": [1 / 7]}
