"""Date-times to and from Bolt without the driver's pure-Python temporal types.

The driver packs a ``datetime`` parameter by way of its own ``neo4j.time.DateTime`` (tens of
microseconds of Python each) and unpacks every stored date-time into one, which the executor
then turns back into a ``datetime`` (``records.convert``); a key/value read has two such
parameters and three or more such values. Bolt 5 and later send a zoned date-time as UTC
epoch seconds, nanoseconds and the offset in seconds (``Structure(b"I", ...)``), which plain
``datetime`` arithmetic reads and writes directly.

Only fixed offsets of whole minutes take the short path, exactly as the driver would send
them and as ``records.convert`` would return them (UTC, nanoseconds truncated to microseconds);
anything else (naive or named-zone values, the driver's own types, years outside 1-9999)
goes the driver's way unchanged. The driver has no public hook for this: ``install`` swaps
the hydration handler of its Bolt 6 connections (private API, checked by
``tests/unit/cypher`` against the installed driver), and leaves the driver alone if that
class is not the one it knows.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from neo4j._async.io._bolt._bolt6 import AsyncBolt6x0
from neo4j._codec.hydration.bolt.v2 import temporal as driver_temporal
from neo4j._codec.hydration.bolt.v3 import HydrationHandler as DriverHandler
from neo4j._codec.packstream import Structure

# The driver's own functions (untyped there), for every value the short path does not take.
driver_dehydrate: Callable[[datetime], Any] = driver_temporal.dehydrate_datetime
driver_hydrate: Callable[..., Any] = driver_temporal.hydrate_datetime
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_DAY = 86_400


def dehydrate(value: datetime) -> Any:
    """A ``datetime`` parameter as the driver packs it."""
    tz = value.tzinfo
    if type(tz) is not timezone:  # naive, pytz or zoneinfo: named zones keep their name
        return driver_dehydrate(value)
    offset = tz.utcoffset(None)
    if offset.microseconds or offset.seconds % 60:
        return driver_dehydrate(value)  # refused there, as before
    since = value - _EPOCH
    return Structure(
        b"I",
        since.days * _DAY + since.seconds,
        since.microseconds * 1000,
        offset.days * _DAY + offset.seconds,
    )


def hydrate(seconds: int, nanoseconds: int, tz: Any = None) -> Any:
    """A stored zoned date-time as ``records.convert`` returns it: UTC, microseconds."""
    if type(tz) is not int:
        return driver_hydrate(seconds, nanoseconds, tz)
    try:
        return _EPOCH + timedelta(seconds=seconds, microseconds=nanoseconds // 1000)
    except OverflowError:
        return driver_hydrate(seconds, nanoseconds, tz)


class Handler(DriverHandler):
    """The driver's Bolt 6 hydration, with the two date-time functions above."""

    def __init__(self) -> None:
        super().__init__()
        self.struct_hydration_functions[b"I"] = hydrate
        self.dehydration_hooks.update(exact_types={datetime: dehydrate})


def install() -> bool:
    """Use ``Handler`` on every Bolt 6 connection opened from now on; False (and nothing
    changed) when the driver's class is not the one this module was written against."""
    current = AsyncBolt6x0.HYDRATION_HANDLER_CLS
    if current is Handler:
        return True
    if current is not DriverHandler:
        return False
    AsyncBolt6x0.HYDRATION_HANDLER_CLS = Handler
    return True
