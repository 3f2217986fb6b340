"""What the model picker and ``/login`` offer: providers and models, as data."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ModelSource(StrEnum):
    """Why a model is offered."""

    CURRENT = "current"
    RECENT = "recent"
    CONFIGURED = "configured"
    SERVED = "served"  # listed by the provider's own server (its /v1/models)
    KNOWN = "known"
    EXTENSION = "extension"  # declared by an extension (vis.Provider)


@dataclass(frozen=True)
class ProviderEntry:
    """A provider the person can log in to: its wire kind and where its key comes from."""

    name: str
    kind: str
    key_env: str  # "" when the provider needs no key
    has_key: bool

    @property
    def ready(self) -> bool:
        return self.has_key or not self.key_env


@dataclass(frozen=True)
class ModelEntry:
    """One row of the model picker."""

    id: str  # provider/model
    source: ModelSource
    ready: bool  # its provider has a key (or needs none)

    @property
    def provider(self) -> str:
        return self.id.partition("/")[0]
