"""``unnamed``: which names an erased person's set-aside entities take off a kept entity."""

from __future__ import annotations

from typing import Any

from palimpsest.resolvers.erasure.authored import unnamed


def row(names: list[str], others: list[str], added: list[str], kept: list[str]) -> dict[str, Any]:
    return {
        "id": "e-person",
        "names": names,
        "merge_id": "m1",
        "added": added,
        "merged_ids": ["e-person", "e-other"],
        "kept_id": "e-kept",
        "kept_aliases": kept,
        "others": others,
    }


def test_a_name_another_member_spells_differently_stays_on_the_kept_entity() -> None:
    # The merge added "Bob" once: the other member's "BOB" normalises to the same name.
    params = unnamed([row(["Bob"], ["BOB"], ["Bob"], ["Bob"])])
    assert params["kept"] == [
        {"id": "e-kept", "aliases": ["Bob"], "alias_norms": ["bob"], "alias_keys": ["bob"]}
    ]
    assert params["records"][0]["added_aliases"] == ["Bob"]
    assert params["records"][0]["merged_ids"] == ["e-other"]


def test_a_name_only_the_person_brought_leaves_the_kept_entity() -> None:
    params = unnamed([row(["Bob", "Bobby"], ["BOB"], ["Bob", "Bobby"], ["Bob", "Bobby", "Al"])])
    assert params["kept"][0]["aliases"] == ["Bob", "Al"]
    assert params["records"][0]["added_aliases"] == ["Bob"]
