"""Results of the admin fields: a scope's usage per plane and the database's embedding models."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from palimpsest.client.enums import Scope


@dataclass(frozen=True, slots=True)
class PlaneUsage:
    """What a scope stores on one plane, and its limit (None: no limit)."""

    plane: str
    used: int
    limit: int | None
    setting: str


@dataclass(frozen=True, slots=True)
class Usage:
    """One scope's usage on every plane."""

    scope: Scope
    planes: list[PlaneUsage]


@dataclass(frozen=True, slots=True)
class EmbeddingModel:
    """An embedding model the database holds vectors of, and its slot (a or b)."""

    model: str
    dimensions: int
    slot: str


@dataclass(frozen=True, slots=True)
class EmbeddingPlane:
    """One plane's vectors of each model (``embeddingStatus``)."""

    plane: str
    active: int
    target: int
    missing: int
    old: int


@dataclass(frozen=True, slots=True)
class EmbeddingStatus:
    """The database's embedding models and a migration's state (platform operator)."""

    state: str
    active: EmbeddingModel
    target: EmbeddingModel | None
    old: EmbeddingModel | None
    aborted: EmbeddingModel | None  # the given-up target, while aborting
    planes: list[EmbeddingPlane]
    started_at: datetime | None
    cutover_at: datetime | None
