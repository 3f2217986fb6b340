"""Named screens the app can open: built-in ones here, forms and live views register later."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from textual.screen import Screen

ScreenFactory = Callable[..., Screen[Any]]
_SCREENS: dict[str, ScreenFactory] = {}
F = TypeVar("F", bound=ScreenFactory)


def register_screen(name: str) -> Callable[[F], F]:
    """Register a screen class or factory under ``name`` (``vis.ask`` forms use ``"form"``)."""

    def register(factory: F) -> F:
        _SCREENS[name] = factory
        return factory

    return register


def screen_factory(name: str) -> ScreenFactory:
    try:
        return _SCREENS[name]
    except KeyError:
        known = ", ".join(sorted(_SCREENS)) or "none"
        raise KeyError(f"no screen named {name!r} is registered (known: {known})") from None


def registered_screens() -> list[str]:
    return sorted(_SCREENS)
