"""The many-tenants plan: sizes, templates, the row mix."""

from __future__ import annotations

import pytest

from palimpsest_bench.tenant_plan import (
    MAX_ROWS,
    MIN_ROWS,
    STEP,
    TARGET_ROWS,
    RowMix,
    load_order,
    target_plan,
    tenant_name,
    tenant_plan,
    tenant_sizes,
    total_rows,
)


def test_sizes_stay_in_range_on_the_step_and_average_about_250() -> None:
    sizes = tenant_sizes(10_000)
    assert len(sizes) == 10_000
    assert min(sizes) >= MIN_ROWS
    assert max(sizes) <= MAX_ROWS
    assert all(s % STEP == 0 for s in sizes)
    # Triangular 50-500 with mode 200: a mean of 250, so 10,000 tenants hold about 2.5M rows.
    assert 240 <= sum(sizes) / len(sizes) <= 260


def test_sizes_depend_only_on_the_count() -> None:
    assert tenant_sizes(500) == tenant_sizes(500)
    assert tenant_sizes(500) != tenant_sizes(501)[:500]


def test_each_size_class_has_exactly_one_template_the_first_of_its_size() -> None:
    plans = tenant_plan(2000)
    templates = [p for p in plans if p.template]
    assert len({p.rows for p in templates}) == len(templates)
    assert {p.rows for p in templates} == {p.rows for p in plans}
    for t in templates:
        assert next(p for p in plans if p.rows == t.rows) is t


def test_templates_load_before_every_copy() -> None:
    order = load_order(tenant_plan(300))
    first_copy = next(i for i, p in enumerate(order) if not p.template)
    assert all(p.template for p in order[:first_copy])
    assert not any(p.template for p in order[first_copy:])
    assert sorted(p.tenant for p in order) == sorted(p.tenant for p in tenant_plan(300))


def test_tenant_names_carry_the_plan_size_so_plans_never_share_a_tenant() -> None:
    assert tenant_name(100, 7) != tenant_name(1000, 7)
    assert len({p.tenant for p in tenant_plan(1000)}) == 1000


def test_the_row_mix_adds_up_and_holds_every_kind() -> None:
    for rows in range(MIN_ROWS, MAX_ROWS + 1, STEP):
        mix = RowMix.of(rows)
        assert mix.rows == rows
        assert min(mix.chunks, mix.turns, mix.notes, mix.facts) >= 1
    assert RowMix.of(200) == RowMix(chunks=100, turns=40, notes=40, facts=20)
    with pytest.raises(ValueError, match="at least 4"):
        RowMix.of(3)


def test_the_target_is_a_writers_tenant_of_200_rows_outside_every_plan() -> None:
    target = target_plan()
    assert target.rows == TARGET_ROWS == 200
    assert target.template
    assert target.tenant not in {p.tenant for p in tenant_plan(1000)}
    assert total_rows([target, target]) == 400


def test_a_plan_needs_tenants() -> None:
    with pytest.raises(ValueError, match="positive"):
        tenant_sizes(0)
