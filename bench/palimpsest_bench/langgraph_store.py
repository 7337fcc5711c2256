"""The LangGraph store over HTTP (docs/reference/langgraph.md): ``items`` items in one
namespace tree (ten sub-namespaces), embedded on the server, then p50/p95 of

- ``get``: one item;
- ``search``: a page of 10 without a filter;
- ``filtered``: a filter that about 1% of the items pass (page of 10): the server reads the
  prefix, the client gets the matches only (``answer_bytes`` against ``scope_value_bytes``,
  what a client-side filter would have had to fetch); its equality also narrows the database
  read (``namespaces.needles``);
- ``range``: ``rank >= items - 5`` (5 items pass): no prefilter narrows a range, so the server
  reads the whole prefix (pages of 200 doubling) and the client still gets only the 5;
- ``ranked``: a query (one server embedding) with the same filter;
- ``namespaces``: list the namespaces under the root.

A fresh tenant on a server in this process; the user is erased afterwards (``eraseMe``).
"""

from __future__ import annotations

import json
import statistics
import time
import uuid
from collections.abc import Callable
from typing import Any

from langgraph.store.base import PutOp

from palimpsest.config import Settings
from palimpsest.identity.tokens import load_keys, mint
from palimpsest.integrations.langgraph import PalimpsestStore
from palimpsest.server import serve_in_thread

COLOURS = ["amber", "cobalt", "crimson", "jade", "ivory", "slate", "ochre", "teal", "plum", "rust"]


def _ms(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50_ms": round(statistics.median(ordered) * 1000, 1), "p95_ms": round(p95 * 1000, 1)}


def run(
    settings: Settings, items: int = 2000, reads: int = 50, say: Callable[[str], None] | None = None
) -> dict[str, Any]:
    say = say or (lambda _: None)
    settings = settings.replace(log_level="WARNING", rate_limit_per_second=0)
    token = mint(
        load_keys(settings),
        tenant=f"bench-lg-{uuid.uuid4().hex[:8]}",
        user="bench",
        agent="langgraph",
        ttl_seconds=3600,
    )
    with serve_in_thread(settings) as url:
        store = PalimpsestStore(url=url, token=token, scope="USER", index={"fields": ["text"]})
        try:
            return _measure(store, items, reads, say)
        finally:
            store.transport.post("mutation { eraseMe { __typename } }", {})
            store.close()


def _measure(
    store: PalimpsestStore, items: int, reads: int, say: Callable[[str], None]
) -> dict[str, Any]:
    values: list[dict[str, Any]] = [
        {
            "text": f"note {i}: the {COLOURS[i % 10]} lantern by the {COLOURS[i // 10 % 10]} door",
            "rank": i,
            "rare": i % 100 == 7,
        }
        for i in range(items)
    ]
    say(f"putting {items} items (embedded on the server)")
    started = time.perf_counter()
    store.batch([PutOp(("bench", f"n{i % 10}"), f"k{i:06d}", v) for i, v in enumerate(values)])
    put_s = time.perf_counter() - started
    rare = {"rare": True}
    calls: dict[str, Callable[[], Any]] = {
        "get": lambda: store.get(("bench", "n3"), "k000013"),
        "search": lambda: store.search(("bench",), limit=10),
        "filtered": lambda: store.search(("bench",), filter=rare, limit=10),
        "range": lambda: store.search(("bench",), filter={"rank": {"$gte": items - 5}}, limit=10),
        "ranked": lambda: store.search(("bench",), query="the jade lantern", filter=rare, limit=10),
        "namespaces": lambda: store.list_namespaces(prefix=("bench",)),
    }
    say(f"timing {reads} calls of each")
    out: dict[str, Any] = {}
    for name, call in calls.items():
        samples = []
        for _ in range(reads):
            began = time.perf_counter()
            call()
            samples.append(time.perf_counter() - began)
        out[name] = _ms(samples)
    hits = store.search(("bench",), filter=rare, limit=10)
    assert len(hits) == min(10, sum(1 for v in values if v["rare"]))
    return {
        "items": items,
        "reads": reads,
        "put_items_per_s": round(items / put_s, 1),
        **out,
        "filtered_hits": len(hits),
        "answer_bytes": len(json.dumps([h.value for h in hits])),
        "scope_value_bytes": len(json.dumps(values)),
    }
