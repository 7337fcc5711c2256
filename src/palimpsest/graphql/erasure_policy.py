"""What an erasure did to rows the person wrote in shared scopes, and the tenant's policy."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime

import strawberry

from palimpsest.resolvers import erasure as ops
from palimpsest.resolvers.erasure import Authored, AuthoredPolicy, Planes

strawberry.enum(
    AuthoredPolicy,
    name="AuthoredPolicy",
    description="What erasing a person does to the rows they wrote in TENANT, AGENT and "
    "GLOBAL scopes: DELETE them, or ANONYMISE them (kept, with the fields naming the writer "
    "removed).",
)


@strawberry.type(description="Rows a person wrote in shared scopes, per plane.")
class AuthoredCounts:
    entries: int
    note_versions: int
    documents: int
    chunks: int
    chunk_revisions: int
    document_revisions: int
    entities: int
    facts: int

    @classmethod
    def of(cls, p: Planes) -> AuthoredCounts:
        return cls(**asdict(p))


@strawberry.type(
    description="A person erasure's rows written outside the person's own scope: deleted or "
    "anonymised by the tenant's policy, and the rows nobody can attribute."
)
class AuthoredErasure:
    policy: AuthoredPolicy
    deleted: AuthoredCounts
    anonymised: AuthoredCounts
    unattributed: int = strawberry.field(
        description="Rows of the tenant's shared scopes written before writers were stamped: "
        "they carry no author, so this erasure could neither delete nor anonymise them."
    )

    @classmethod
    def of(cls, a: Authored) -> AuthoredErasure:
        return cls(
            policy=a.policy,
            deleted=AuthoredCounts.of(a.deleted),
            anonymised=AuthoredCounts.of(a.anonymised),
            unattributed=a.unattributed,
        )


@strawberry.type(description="The tenant's erasure policy.")
class ErasurePolicy:
    authored: AuthoredPolicy
    updated_at: datetime | None = strawberry.field(description="Null: never set (the default).")

    @classmethod
    def of(cls, p: ops.ErasurePolicy) -> ErasurePolicy:
        return cls(authored=p.authored, updated_at=p.updated_at)
