"""The text-engines bench's pure parts (the run itself needs Neo4j with the extension)."""

from __future__ import annotations

import random

from palimpsest_bench import text_engines


def test_percentiles_are_read_off_the_sorted_values() -> None:
    values = [float(v) for v in range(100, 0, -1)]
    assert text_engines._percentile(values, 0.5) == 51.0  # index round(49.5) = 50
    assert text_engines._percentile(values, 0.95) == 95.0
    assert text_engines._percentile([7.0], 0.95) == 7.0


def test_rows_draw_a_zipf_vocabulary_from_the_seed() -> None:
    first = text_engines._words(random.Random(1))
    assert first == text_engines._words(random.Random(1))
    assert 20 <= len(first) <= 60
    assert all(w.startswith("w") and int(w[1:]) < text_engines.VOCABULARY for w in first)
    many = [w for _ in range(200) for w in text_engines._words(random.Random(_))]
    assert many.count("w0") > many.count("w100")  # the head is the most frequent
