"""The settings: one ``Settings`` read from the environment, grouped in frozen sections."""

from palimpsest.config.sections import (
    AdmissionSettings,
    AuthSettings,
    EmbeddingSettings,
    LimitSettings,
    LocalSettings,
    ModelSettings,
    Neo4jSettings,
    QueueSettings,
    RecallSettings,
    SqlSettings,
)
from palimpsest.config.settings import Settings, flat_names, variable_of

__all__ = [
    "AdmissionSettings",
    "AuthSettings",
    "EmbeddingSettings",
    "LimitSettings",
    "LocalSettings",
    "ModelSettings",
    "Neo4jSettings",
    "QueueSettings",
    "RecallSettings",
    "Settings",
    "SqlSettings",
    "flat_names",
    "variable_of",
]
