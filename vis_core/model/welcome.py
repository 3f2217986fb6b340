"""What the welcome header of a new session names."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WelcomeFacts:
    """What the welcome header of a new session names: the model ("" when there is none),
    whether the project is trusted, and the jail mode (``welcome.jail_mode``); ``lapsed``:
    not trusted because its control files changed since the person trusted it."""

    model: str
    trusted: bool
    jail: tuple[bool, str]
    lapsed: bool = False
