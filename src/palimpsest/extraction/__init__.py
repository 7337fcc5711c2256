"""Facts drawn from free text by a model the operator chooses (the ``model`` extractor).

By role:

- ``wire``: the two protocols' request bodies and answers (Chat Completions, Messages);
- ``client``: one call over HTTP, with retries, a capped read and the key kept secret;
- ``prompt``: the versioned instructions (``prompts/<version>.md``) and a call's document;
- ``candidates``: the answer's schema, and the checks every candidate must pass;
- ``extractor``: ``ModelExtractor``, the ``Extractor`` the consolidator runs;
- ``judge``: ``ModelJudge``, the verdicts on pairs of close facts (report-only);
- ``metrics``: its Prometheus counters.
"""

from __future__ import annotations

from collections.abc import Callable

from palimpsest.config import Settings
from palimpsest.extraction.client import Endpoint, ModelClient, ModelFailed
from palimpsest.extraction.extractor import ModelExtractor
from palimpsest.extraction.judge import ModelJudge
from palimpsest.extraction.prompt import VERSION as PROMPT_VERSION
from palimpsest.extraction.wire import Protocol
from palimpsest.ontology.extractors import Extractor, load


def load_extractors(settings: Settings, lease_seconds: float | None = None) -> list[Extractor]:
    """The extractors ``PALIMPSEST_EXTRACTORS`` names, ``model`` made from the settings (its
    calls bounded by a share of the worker's lease, ``lease_seconds`` or the setting's)."""
    more: dict[str, Callable[[], Extractor]] = {
        ModelExtractor.name: lambda: ModelExtractor.from_settings(settings, lease_seconds)
    }
    return load(settings.queue.extractor_names, more)


def load_judge(settings: Settings) -> ModelJudge | None:
    """The judge of fact pairs, when judging is on and a model is configured."""
    return ModelJudge.from_settings(settings) if settings.model.judges else None


__all__ = [
    "PROMPT_VERSION",
    "Endpoint",
    "ModelClient",
    "ModelExtractor",
    "ModelFailed",
    "ModelJudge",
    "Protocol",
    "load_extractors",
    "load_judge",
]
