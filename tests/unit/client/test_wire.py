"""The client's wire codec (``client.wire``): dates and times come back as Python values, and
an operation's result named by text is the type its text names."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from datetime import UTC, date, datetime

import pytest

from palimpsest.client import operations, recall_results, results
from palimpsest.client.recall_results import TimeRange
from palimpsest.client.wire import Operation, decode, encode, result_type


def test_a_time_range_decodes_to_dates() -> None:
    found = decode(list[TimeRange], [{"start": "2023-05-06", "end": "2023-05-07"}])
    assert found == [TimeRange(date(2023, 5, 6), date(2023, 5, 7))]


def test_dates_and_times_encode_as_iso_text() -> None:
    assert encode(date(2023, 5, 6)) == "2023-05-06"
    assert encode([datetime(2023, 5, 6, 12, tzinfo=UTC)]) == ["2023-05-06T12:00:00+00:00"]


def test_a_result_named_by_text_resolves_to_its_type() -> None:
    assert result_type("str") is str
    assert result_type("MemoryEntry | None") == results.MemoryEntry | None
    assert result_type("list[Fact]") == list[recall_results.Fact]
    assert result_type("list[str] | None") == list[str] | None
    # The admin and erasure types are found through results' re-exports.
    assert result_type("ErasurePolicy") is results.ErasurePolicy
    # A note's type is the one results re-exports, found without importing results.
    assert result_type("Provenance") is results.Provenance


def test_a_notes_result_imports_only_the_notes_types() -> None:
    probe = (
        "import sys; from palimpsest.client import operations; operations.MEMORY.result; "
        "print(sorted(m for m in sys.modules if m.endswith('results')))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['palimpsest.client.note_results']"


def test_a_result_no_module_defines_is_refused() -> None:
    with pytest.raises(LookupError, match="Colour"):
        result_type("Colour")


def test_an_operation_reads_its_result_by_the_type_its_text_names() -> None:
    named = Operation[results.MemoryEntry]("query", "memory", "key: String!", "MemoryEntry")
    given = Operation[results.MemoryEntry]("query", "memory", "key: String!", results.MemoryEntry)
    assert named.result is given.result is results.MemoryEntry
    assert named.request({"key": "k"}) == given.request({"key": "k"})
    assert named != given  # equal by what was given, as the dataclass it replaced
    assert named == Operation("query", "memory", "key: String!", "MemoryEntry")
    assert hash(named) == hash(Operation("query", "memory", "key: String!", "MemoryEntry"))


def test_an_operation_is_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        operations.MEMORY.field = "memories"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del operations.MEMORY.kind


def test_importing_the_operations_builds_no_result_type() -> None:
    probe = "import sys, palimpsest.client.operations; print(sorted(sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = done.stdout
    assert "palimpsest.client.operations" in loaded
    for module in ("note_results", "results", "recall_results", "erasure_results"):
        assert f"'palimpsest.client.{module}'" not in loaded, module
