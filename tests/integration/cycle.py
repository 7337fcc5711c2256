"""Helpers of the memory-cycle tests: harvest over HTTP, and the consolidator steered in-process
(the same ``consolidate_scope`` the command runs, with a clock a test moves)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from palimpsest.errors import InvalidArgument
from palimpsest.identity import Scope, resolve_scope
from palimpsest.identity.acting import act_for_user
from palimpsest.ontology.extractors import (
    Extraction,
    MentionsExtractor,
    ProvidedExtractor,
    ScopeView,
    Turn,
)
from palimpsest.resolvers.cycle.consolidate import Outcome, WorkerConfig, consolidate_scope
from palimpsest.resolvers.services import Services, utc_now
from tests.integration.answers import ok
from tests.integration.conftest import Gql

HARVEST = """mutation($spans: [SpanInput!]!, $gen: Int!) {
  harvest(spans: $spans, compactionGeneration: $gen) { accepted spanIds } }"""


class Clock:
    """A clock a test moves forward, to let leases and back-offs run out."""

    def __init__(self) -> None:
        self.offset = timedelta()

    def __call__(self) -> datetime:
        return utc_now() + self.offset


def config(owner: str, *extractors: Any, **changes: Any) -> WorkerConfig:
    base = WorkerConfig(
        owner=owner,
        extractors=list(extractors) or [MentionsExtractor(), ProvidedExtractor()],
        batch_size=50,
        lease_seconds=60,
        max_attempts=3,
        backoff_seconds=0,
    )
    return replace(base, **changes)


def scope_of(tenant: str, user: str) -> tuple[str, str, str]:
    ref = resolve_scope(act_for_user(tenant, user), Scope.USER)
    return tenant, user, ref.scope_key


async def drain(svc: Services, tenant: str, user: str, cfg: WorkerConfig | None = None) -> Outcome:
    """Consolidate one user's queue until nothing is leasable; the summed outcome."""
    cfg = cfg or config("test-worker")
    total = Outcome()
    while True:
        o = await consolidate_scope(svc, cfg, *scope_of(tenant, user))
        if not o.leased:
            return total
        total = total + o


def harvest(gql: Gql, who: str, texts: Sequence[str], gen: int = 1, **span: Any) -> list[str]:
    spans = [{"text": t, "speaker": "Alice", "sourceId": t, **span} for t in texts]
    receipt = ok(gql(HARVEST, who, spans=spans, gen=gen))["harvest"]
    assert receipt["accepted"] == len(texts)
    ids: list[str] = receipt["spanIds"]
    return ids


class FailingExtractor:
    """Refuses turns whose text contains ``marker``, ``times`` times each (forever: -1)."""

    name = "failing"

    def __init__(self, marker: str, times: int) -> None:
        self.marker, self.left = marker, times

    async def extract(self, turns: Sequence[Turn], scope: ScopeView) -> Extraction:
        if self.left != 0 and any(self.marker in t.text for t in turns):
            self.left -= 1
            raise InvalidArgument("the test extractor refuses this span")
        return Extraction()
