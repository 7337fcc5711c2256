"""The many-tenants run's pure parts: index folders named, resident memory read."""

from __future__ import annotations

import os
from pathlib import Path

from palimpsest.config import Settings
from palimpsest_bench.many_tenants import (
    HEAP,
    PAGECACHE,
    index_folders,
    index_sizes,
    resident_bytes,
    server_settings,
)


def test_index_folders_sum_each_index_under_its_id(tmp_path: Path) -> None:
    s = Settings().model_copy(update={"home": tmp_path})
    base = s.neo4j_home / "data" / "databases" / "neo4j" / "schema" / "index"
    (base / "range-1.0" / "3").mkdir(parents=True)
    (base / "range-1.0" / "3" / "a").write_bytes(b"x" * 10)
    (base / "range-1.0" / "3" / "b").write_bytes(b"x" * 5)
    (base / "vector-3.0" / "7" / "seg").mkdir(parents=True)
    (base / "vector-3.0" / "7" / "seg" / "c").write_bytes(b"x" * 100)
    assert index_folders(s) == {"3": 15, "7": 100}


def test_index_sizes_name_each_folder_by_its_index_largest_first() -> None:
    indexes = [
        {"id": 3, "name": "chunk_scope", "type": "RANGE"},
        {"id": 7, "name": "chunk_embedding", "type": "VECTOR"},
    ]
    sizes = index_sizes({"3": 15, "7": 100, "9": 1}, indexes)
    assert list(sizes.items()) == [
        ("vector:chunk_embedding", 100),
        ("range:chunk_scope", 15),
        ("9", 1),
    ]


def test_both_servers_get_the_same_memory_whatever_they_hold(tmp_path: Path) -> None:
    a = server_settings(Settings(), tmp_path / "loaded", 7731, 7521)
    b = server_settings(Settings(), tmp_path / "empty", 7732, 7522)
    assert (a.neo4j.heap, a.neo4j.pagecache) == (b.neo4j.heap, b.neo4j.pagecache)
    assert (a.neo4j.heap, a.neo4j.pagecache) == (HEAP, PAGECACHE)
    assert a.neo4j.bolt_port == 7731
    assert a.home == (tmp_path / "loaded").resolve()


def test_resident_bytes_of_this_process_and_of_none() -> None:
    mine = resident_bytes(os.getpid())
    assert mine is not None
    assert mine > 1_000_000
    assert resident_bytes(None) is None
