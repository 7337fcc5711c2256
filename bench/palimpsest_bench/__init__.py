"""Benchmarks and evaluation harnesses; run through `palimpsest bench` and `palimpsest eval`.

The suites the product's tests run too (attack, fuzz, faults, the crash suite, the API process
and wire client they share) are their own distribution, ``palimpsest-suites``, which the bench
depends on; their old paths here still import, as the same module objects, for one release.
"""

from __future__ import annotations

from palimpsest import MovedPaths

_MODULES = ("attack", "fuzz", "faults", "served", "wire")
_ATTACK = (
    "findings",
    "generate",
    "matrix",
    "plant",
    "probe_bookmarks",
    "probe_doors",
    "probe_erase",
    "probe_placement",
    "probe_sql",
    "probe_stalls",
    "probes",
    "run",
)
# Deprecated import paths (issue 44 moved the suites out of the bench), kept for one release.
MOVED: dict[str, str] = {
    **{f"palimpsest_bench.{m}": f"palimpsest_suites.{m}" for m in _MODULES},
    **{f"palimpsest_bench.attack.{m}": f"palimpsest_suites.attack.{m}" for m in _ATTACK},
}


# Ahead of the other finders: an editable install's finder may still map an old name to a file
# of another checkout.
MovedPaths("palimpsest_bench", MOVED).install(first=True)
