"""Value rules shared by every level: where a value came from, reading stored and typed text."""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import Any

from vis_core.extension.settings_decl import Setting, SettingScope, SettingType

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


class Source(StrEnum):
    """The level that decides a setting's effective value, least to most specific."""

    DEFAULT = "default"
    GLOBAL = "global"
    PROJECT = "project"
    GROUP = "group"
    SESSION = "session"
    COMMAND_LINE = "command line"


SCOPE_ORDER: tuple[SettingScope, ...] = (
    SettingScope.GLOBAL,
    SettingScope.PROJECT,
    SettingScope.GROUP,
    SettingScope.SESSION,
)


def scope_list(scopes: Iterable[SettingScope | str]) -> str:
    """``'global' and 'project'`` for messages."""
    names = [f"'{SettingScope(scope).value}'" for scope in scopes]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def parse_text(setting: Setting[Any], text: str) -> Any:
    """A value typed as text (``--toggles``, ``vis settings set``), checked by the setting."""
    if setting.type is SettingType.BOOLEAN:
        word = text.strip().lower()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
        raise ValueError(f"setting {setting.id!r} takes true or false, got {text!r}")
    return setting.coerce(text)


def read_stored(setting: Setting[Any], value: Any) -> Any:
    """A value from a file (YAML/TOML types), checked by the setting.

    A quoted ``"yes"`` for a true/false setting is refused, not guessed: a file that says
    ``jail = "yes"`` names a value of the wrong type, and the caller reports it.
    """
    if setting.type is SettingType.BOOLEAN and not isinstance(value, bool):
        raise ValueError(
            f"setting {setting.id!r} takes a boolean (true or false, without quotes), "
            f"got {type(value).__name__} {value!r}"
        )
    if setting.type is not SettingType.BOOLEAN and isinstance(value, int | float):
        if not isinstance(value, bool):
            value = str(value)
    return setting.coerce(value)
