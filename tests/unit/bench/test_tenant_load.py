"""Copy batches of the many-tenants load."""

from __future__ import annotations

from palimpsest_bench.tenant_load import COPY_BATCH_ROWS, copy_batches
from palimpsest_bench.tenant_plan import tenant_plan


def test_batches_hold_one_size_class_each_within_the_row_budget_and_every_copy_once() -> None:
    copies = [p for p in tenant_plan(1000) if not p.template]
    sizes = {rows: rows * 6 for rows in {p.rows for p in copies}}  # graph rows of a template
    batches = copy_batches(copies, sizes)
    for batch in batches:
        assert len({p.rows for p in batch}) == 1
        assert sum(sizes[p.rows] for p in batch) <= max(COPY_BATCH_ROWS, sizes[batch[0].rows])
    flat = [p.tenant for b in batches for p in b]
    assert sorted(flat) == sorted(p.tenant for p in copies)


def test_a_template_larger_than_the_budget_is_copied_one_at_a_time() -> None:
    copies = [p for p in tenant_plan(200) if not p.template]
    sizes = {p.rows: COPY_BATCH_ROWS * 2 for p in copies}
    assert all(len(b) == 1 for b in copy_batches(copies, sizes))


def test_a_load_stopped_part_way_keeps_the_plans_mix_of_sizes() -> None:
    copies = [p for p in tenant_plan(2000) if not p.template]
    sizes = {rows: rows * 6 for rows in {p.rows for p in copies}}
    batches = copy_batches(copies, sizes)
    half = [p for b in batches[: len(batches) // 2] for p in b]
    big = [p for p in half if p.rows >= 300]
    share_planned = sum(p.rows >= 300 for p in copies) / len(copies)
    # Sorted by size, the first half would hold none of the large tenants.
    assert abs(len(big) / len(half) - share_planned) < 0.1
