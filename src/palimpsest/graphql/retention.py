"""The tenant's retention policy: how long ``palimpsest sweep`` keeps the past."""

from __future__ import annotations

from enum import Enum

import strawberry

from palimpsest.graphql.context import Info
from palimpsest.resolvers import tenant as ops


@strawberry.enum(description="A window of the retention policy.")
class RetentionWindow(Enum):
    VERSIONS = "versions_seconds"
    TOMBSTONES = "tombstones_seconds"
    DONE_SPANS = "done_spans_seconds"


@strawberry.type(
    description="How long the sweep keeps the past, in seconds (0: for ever). Versions and "
    "tombstones are kept for ever unless the tenant or the server sets a window."
)
class RetentionPolicy:
    versions_seconds: int = strawberry.field(
        description="Past note versions that ended longer ago are swept."
    )
    tombstones_seconds: int = strawberry.field(
        description="Delete tombstones older than this are swept."
    )
    done_spans_seconds: int = strawberry.field(
        description="Consolidated queue spans older than this are swept."
    )
    overridden: list[RetentionWindow] = strawberry.field(
        description="The windows this tenant set; the others are the server's settings."
    )

    @classmethod
    def of(cls, p: ops.RetentionPolicy) -> RetentionPolicy:
        return cls(
            versions_seconds=p.versions_seconds,
            tombstones_seconds=p.tombstones_seconds,
            done_spans_seconds=p.done_spans_seconds,
            overridden=[RetentionWindow(k) for k in p.overridden],
        )


@strawberry.type
class RetentionQuery:
    @strawberry.field(description="This tenant's retention policy, as the sweep applies it.")
    async def retention_policy(self, info: Info) -> RetentionPolicy:
        c = info.context
        return RetentionPolicy.of(await ops.retention_policy(c.services, c.principal))


@strawberry.type
class RetentionMutation:
    @strawberry.mutation(
        description="Admin: set every window of this tenant's retention policy at once, in "
        "seconds: 0 keeps that past for ever, null returns the window to the server's "
        "setting. A knownAt read before what a sweep removed is then refused as swept."
    )
    async def set_retention_policy(
        self,
        info: Info,
        versions_seconds: int | None = None,
        tombstones_seconds: int | None = None,
        done_spans_seconds: int | None = None,
    ) -> RetentionPolicy:
        c = info.context
        found = await ops.set_retention_policy(
            c.services, c.principal, versions_seconds, tombstones_seconds, done_spans_seconds
        )
        return RetentionPolicy.of(found)
