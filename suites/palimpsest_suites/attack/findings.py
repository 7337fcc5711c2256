"""What an attack run counts and how it compares replies: the tally of findings, the canary
pattern, the census query that proves a planted object still exists, and the masking that
makes two replies comparable (``run``)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from palimpsest_suites.attack import plant

CANARY = re.compile(rb"cnry[0-9a-f]{20}")
MAX_FINDINGS = 25


@dataclass
class Tally:
    requests: int = 0
    leaks: int = 0
    internal: int = 0
    untyped_5xx: int = 0
    uncoded_errors: int = 0
    foreign_id_mismatches: int = 0
    destroyed: int = 0
    reach_disagreements: int = 0
    pairs: int = 0
    unstable_pairs: int = 0
    seen: set[str] = field(default_factory=set)
    codes: Counter[str] = field(default_factory=Counter)
    field_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    findings: list[dict[str, Any]] = field(default_factory=list)

    def note(self, finding: str, **detail: Any) -> None:
        if len(self.findings) < MAX_FINDINGS:
            self.findings.append({"finding": finding, **detail})


def census_query(obj: plant.Planted) -> tuple[str, dict[str, Any]]:
    match obj.kind:
        case "key":
            return "query($s: Scope!, $k: String!) { memory(scope: $s, key: $k) { value } }", {
                "k": obj.ref
            }
        case "document":
            q = "query($s: Scope!, $i: ID!) { document(scope: $s, id: $i) { markdown } }"
            return q, {"i": obj.ref}
        case "fact":
            return "query($s: Scope!, $i: ID!) { fact(scope: $s, id: $i) { text } }", {"i": obj.ref}
        case _:
            q = (
                "query($s: Scope!, $q: String!, $a: JSON) "
                "{ sqlQuery(scope: $s, statement: $q, args: $a) { rows } }"
            )
            return q, {"q": "SELECT body FROM vault WHERE body = ?", "a": [obj.canary]}


def replace_ids(data: bytes, swap: dict[str, str]) -> bytes:
    for old, new in swap.items():
        data = data.replace(old.encode(), new.encode())
    return data


TIMESTAMP = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)")


def mask(body: bytes, names: dict[str, str]) -> bytes:
    """Ids by their position in the request; write times, which differ between two calls."""
    return TIMESTAMP.sub(b"<time>", replace_ids(body, names))
