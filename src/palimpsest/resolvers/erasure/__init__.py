"""Erasure: a person or a subject across every plane, its jobs, policy and audit.

The face of the plane: what the doors call. Its modules import one another directly.
"""

from palimpsest.resolvers.erasure.audit import MAX_LIST_LIMIT, list_erasures
from palimpsest.resolvers.erasure.authored import (
    ErasurePolicy,
    erasure_policy,
    set_erasure_policy,
)
from palimpsest.resolvers.erasure.erase import (
    erase_me,
    erase_subject,
    erase_user,
    resume_pending,
)
from palimpsest.resolvers.erasure.jobs import (
    Authored,
    AuthoredPolicy,
    Counts,
    ErasureKind,
    ErasureStatus,
    Planes,
    Receipt,
)

__all__ = [
    "MAX_LIST_LIMIT",
    "Authored",
    "AuthoredPolicy",
    "Counts",
    "ErasureKind",
    "ErasurePolicy",
    "ErasureStatus",
    "Planes",
    "Receipt",
    "erase_me",
    "erase_subject",
    "erase_user",
    "erasure_policy",
    "list_erasures",
    "resume_pending",
    "set_erasure_policy",
]
