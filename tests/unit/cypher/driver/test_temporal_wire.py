"""The short date-time path packs and unpacks exactly what the driver's own path (followed by
``records.convert``) would, and falls back to it for everything else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from neo4j._async.io._bolt._bolt6 import AsyncBolt6x0, AsyncBolt6x1
from neo4j._codec.hydration.bolt.v3 import HydrationHandler as DriverHandler

from palimpsest.cypher.driver import temporal_wire
from palimpsest.cypher.driver.records import convert

offsets = st.integers(min_value=-18 * 60, max_value=18 * 60).map(
    lambda m: timezone(timedelta(minutes=m))
)
aware = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=offsets
)
# Epoch seconds of years 1-9999, and beyond them on both sides.
seconds = st.integers(min_value=-62_135_596_800 - 10**6, max_value=253_402_300_799 + 10**6)


@given(aware)
def test_a_fixed_offset_parameter_packs_as_the_driver_packs_it(value: datetime) -> None:
    assert temporal_wire.dehydrate(value) == temporal_wire.driver_dehydrate(value)


# Not a zoneinfo zone: the driver's own path hands its DateTime to ZoneInfo.utcoffset, which
# crashes the interpreter now and then (a segmentation fault, on main as well).
@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 12, 2, 4, 0, 1, 999_999),  # naive
        datetime(1969, 12, 31, 23, 59, 59, 1, tzinfo=UTC),
    ],
)
def test_other_parameters_pack_as_the_driver_packs_them(value: datetime) -> None:
    assert temporal_wire.dehydrate(value) == temporal_wire.driver_dehydrate(value)


@pytest.mark.parametrize("offset", [timedelta(microseconds=500), timedelta(seconds=-30)])
def test_an_offset_of_part_minutes_is_refused_as_the_driver_refuses_it(offset: timedelta) -> None:
    value = datetime(2026, 1, 1, tzinfo=timezone(offset))
    with pytest.raises(ValueError, match="whole number of minutes"):
        temporal_wire.driver_dehydrate(value)
    with pytest.raises(ValueError, match="whole number of minutes"):
        temporal_wire.dehydrate(value)


@given(seconds, st.integers(min_value=0, max_value=999_999_999), st.integers(-64800, 64800))
def test_a_stored_date_time_unpacks_as_convert_returns_it(
    epoch: int, nanoseconds: int, offset: int
) -> None:
    try:
        expected = convert(temporal_wire.driver_hydrate(epoch, nanoseconds, offset))
    except (ValueError, OverflowError) as e:
        with pytest.raises(type(e)):
            temporal_wire.hydrate(epoch, nanoseconds, offset)
        return
    got = temporal_wire.hydrate(epoch, nanoseconds, offset)
    assert got == expected
    assert got.tzinfo is expected.tzinfo is UTC


def test_named_zones_and_local_date_times_unpack_the_driver_s_way() -> None:
    for tz in ("Europe/Paris", None):
        expected = temporal_wire.driver_hydrate(1_796_183_764, 5, tz)
        got = temporal_wire.hydrate(1_796_183_764, 5, tz)
        assert type(got) is type(expected)
        assert got == expected


def test_installed_on_the_driver_s_bolt_6_connections() -> None:
    """Fails when a driver upgrade changes the private class this leans on."""
    assert AsyncBolt6x0.HYDRATION_HANDLER_CLS in (DriverHandler, temporal_wire.Handler)
    assert temporal_wire.install()
    assert AsyncBolt6x0.HYDRATION_HANDLER_CLS is temporal_wire.Handler
    assert AsyncBolt6x1.HYDRATION_HANDLER_CLS is temporal_wire.Handler
    handler = temporal_wire.Handler()
    assert handler.struct_hydration_functions[b"I"] is temporal_wire.hydrate
    assert handler.dehydration_hooks.get_transformer(datetime.now(UTC)) is temporal_wire.dehydrate
