"""Where an extension was found and how its load went: closed sets the settings share."""

from __future__ import annotations

from enum import StrEnum


class ExtensionSource(StrEnum):
    """Where an extension was found; later sources override earlier ones with the same name."""

    BUNDLED = "bundled"
    PACKAGE = "package"
    USER = "user"
    PROJECT = "project"

    @property
    def rank(self) -> int:
        return list(ExtensionSource).index(self)


class ExtensionStatus(StrEnum):
    """How an extension's load ended (``overridden``: a same-named one from a later source
    is used instead)."""

    LOADED = "loaded"
    FAILED = "failed"
    OVERRIDDEN = "overridden"
    DISABLED = "disabled"


class GuideKind(StrEnum):
    """What an extension ships for the model to read (``apropos`` finds, ``doc`` reads)."""

    GUIDE = "guide"  # guides/NAME.md
    SKILL = "skill"  # skills/NAME.md or skills/NAME/SKILL.md
