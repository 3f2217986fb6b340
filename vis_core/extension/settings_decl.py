"""``vis.Setting``: one declared setting row (boolean, enum or string), validated without IO."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from vis_core.extension.errors import member
from vis_core.extension.runtime import installed_runtime
from vis_core.model.lines import is_one_line

T = TypeVar("T")

SETTING_ID = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$")
MAX_STRING_CHARS = 4096
CORE_OWNER = "Vis"


class SettingType(StrEnum):
    BOOLEAN = "boolean"
    ENUM = "enum"
    STRING = "string"


class SettingScope(StrEnum):
    """Levels a value can be saved at; the most specific one wins."""

    GLOBAL = "global"
    PROJECT = "project"
    GROUP = "group"
    SESSION = "session"


# C0 and C1 controls (NEL ends a line, CSI starts a terminal escape), and the Unicode line
# and paragraph separators: each ends or hides in a one-line value
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _sequence(value: object, what: str) -> tuple[Any, ...]:
    if isinstance(value, str | bytes) or isinstance(value, Mapping):
        raise ValueError(f"{what} must be a list or tuple, not {type(value).__name__}")
    if not isinstance(value, Iterable):
        raise ValueError(f"{what} must be a list or tuple, got {type(value).__name__}")
    return tuple(value)


def normalize_string(value: object, where: str) -> str:
    """A string setting value: stripped, at most 4096 characters, no control characters."""
    if not isinstance(value, str):
        raise ValueError(f"{where} must be a string, got {type(value).__name__}")
    text = value.strip()
    if len(text) > MAX_STRING_CHARS:
        raise ValueError(f"{where} has {len(text)} characters; the limit is {MAX_STRING_CHARS}")
    if _CONTROL.search(text):
        raise ValueError(
            f"{where} contains a control character such as a line break; use one line of text"
        )
    return text


@dataclass(frozen=True, kw_only=True)
class Setting(Generic[T]):
    """A setting row in the shared Settings tree; ``value()`` reads it inside a callback."""

    id: str
    label: str
    default: T
    type: SettingType | str = SettingType.BOOLEAN
    choices: tuple[str, ...] = ()
    parent: str | None = None
    is_secret: bool = False
    scopes: Sequence[SettingScope | str] = (SettingScope.GLOBAL,)
    on_change: Callable[[Any, Any, str], object] | None = field(default=None, compare=False)
    description: str = ""

    def __post_init__(self) -> None:
        sid = self.id
        if not isinstance(sid, str) or not SETTING_ID.fullmatch(sid):
            raise ValueError(
                f"setting id {sid!r} is not a lower-case snake_case identifier; "
                "use letters, digits and single underscores, such as 'report_details'"
            )
        where = f"setting {sid!r}"
        if not isinstance(self.label, str) or not self.label.strip() or not is_one_line(self.label):
            raise ValueError(f"{where}: label must be one nonblank line of text")
        if not isinstance(self.description, str):
            raise ValueError(f"{where}: description must be a string")
        kind = member(SettingType, self.type, f"{where}: type")
        object.__setattr__(self, "type", kind)
        choices = _sequence(self.choices, f"{where}: choices")
        default: Any = self.default
        if kind is SettingType.BOOLEAN:
            if not isinstance(default, bool):
                raise ValueError(
                    f"{where}: a boolean setting needs default=True or default=False, "
                    f"got {default!r}; for text use type='string', for a choice type='enum'"
                )
            if choices:
                raise ValueError(f"{where}: choices belong to type='enum' settings only")
        elif kind is SettingType.ENUM:
            if not choices:
                raise ValueError(f"{where}: an enum setting needs string choices")
            for choice in choices:
                if not isinstance(choice, str) or not choice.strip():
                    raise ValueError(f"{where}: every choice must be a nonblank string")
            if len(set(choices)) != len(choices):
                raise ValueError(f"{where}: choices must not repeat")
            if default not in choices:
                raise ValueError(
                    f"{where}: default {default!r} is not one of its choices {list(choices)}"
                )
        else:
            if choices:
                raise ValueError(f"{where}: choices belong to type='enum' settings only")
            default = normalize_string(default, f"{where}: default")
        object.__setattr__(self, "choices", choices)
        object.__setattr__(self, "default", default)
        if self.parent is not None:
            if not isinstance(self.parent, str) or not SETTING_ID.fullmatch(self.parent):
                raise ValueError(f"{where}: parent must be the id of another setting")
            if self.parent == sid:
                raise ValueError(f"{where}: a setting cannot be its own parent")
        if not isinstance(self.is_secret, bool):
            raise ValueError(f"{where}: is_secret must be True or False")
        raw_scopes = _sequence(self.scopes, f"{where}: scopes")
        if not raw_scopes:
            raise ValueError(
                f"{where}: scopes must not be empty; use a subset of "
                "'global', 'project', 'group' and 'session'"
            )
        scopes: list[SettingScope] = []
        for scope in raw_scopes:
            parsed = member(SettingScope, scope, f"{where}: scope")
            if parsed in scopes:
                raise ValueError(f"{where}: scope {parsed.value!r} is listed twice")
            scopes.append(parsed)
        object.__setattr__(self, "scopes", tuple(scopes))
        if self.is_secret:
            if kind is not SettingType.STRING:
                raise ValueError(f"{where}: a secret setting needs type='string'")
            if default != "":
                raise ValueError(f'{where}: a secret setting needs default=""')
            if self.scopes != (SettingScope.GLOBAL,):
                raise ValueError(f"{where}: a secret setting allows only the 'global' scope")
        if self.on_change is not None and not callable(self.on_change):
            raise ValueError(f"{where}: on_change must be a callable (old, new, scope) or None")

    def coerce(self, value: object) -> Any:
        """``value`` checked (and for strings, stripped) against this setting's type."""
        where = f"setting {self.id!r}"
        if self.type is SettingType.BOOLEAN:
            if not isinstance(value, bool):
                raise ValueError(f"{where} takes true or false, got {value!r}")
            return value
        if self.type is SettingType.ENUM:
            if value not in self.choices:
                raise ValueError(f"{where} takes one of {list(self.choices)}, got {value!r}")
            return value
        return normalize_string(value, where)

    def value(self) -> T:
        """The effective value in this callback, as the runtime of the Vis process it runs in
        resolves it; the declared default outside Vis."""
        runtime = installed_runtime()
        if runtime is None:
            return self.default
        return runtime.setting_value(self.id, self.default)
