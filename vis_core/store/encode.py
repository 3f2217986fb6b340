"""Fast event serialization for the log: the same dict and JSON as ``Event.to_dict``/``to_json``.

``Event.to_dict`` walks dataclasses with ``dataclasses.fields`` on every call; appending
100,000 activity events spends most of its time there. This module caches field names per
class and builds identical output (tests compare it with ``Event.to_json``).
"""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass
from enum import StrEnum
from typing import Any

from vis_core.events import Event, Usage
from vis_core.extension.activity import ActivityRecord

_NAMES: dict[type, tuple[str, ...]] = {}
_LEAF, _SEQ, _ENUM = 0, 1, 2
_KINDS: dict[type, int | tuple[str, ...]] = {}
_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in fields(cls))
    return names


def _kind(cls: type) -> int | tuple[str, ...]:
    """How :func:`plain` treats instances of ``cls``: field names, or a _LEAF/_SEQ/_ENUM tag."""
    kind: int | tuple[str, ...]
    if is_dataclass(cls):
        kind = _names(cls)
    elif issubclass(cls, tuple | list):
        kind = _SEQ
    elif issubclass(cls, StrEnum):
        kind = _ENUM
    else:
        kind = _LEAF
    _KINDS[cls] = kind
    return kind


def plain(value: Any) -> Any:
    """What ``vis_core.extension.activity.to_plain`` returns, faster."""
    cls = type(value)
    kind = _KINDS.get(cls)
    if kind is None:
        kind = _kind(cls)
    if kind == _LEAF:
        return value
    if kind == _SEQ:
        return [plain(item) for item in value]
    if kind == _ENUM:
        return value.value
    data: dict[str, Any] = {"kind": cls.__name__}
    for name in kind:  # type: ignore[union-attr]
        item = getattr(value, name)
        data[name] = item if _KINDS.get(type(item)) == _LEAF else plain(item)
    return data


def activity_dict(record: ActivityRecord) -> dict[str, Any]:
    """What ``vis_core.events.activity_to_dict`` returns, faster."""
    data = {name: getattr(record, name) for name in _names(ActivityRecord)}
    data["tag"] = record.tag.value
    data["state"] = record.state.value
    presentation = record.presentation
    data["presentation"] = None if presentation is None else plain(presentation)
    return data


def event_dict(event: Event) -> dict[str, Any]:
    """What ``Event.to_dict`` returns, faster."""
    data: dict[str, Any] = {"type": event.type}
    for name in _names(type(event)):
        value = getattr(event, name)
        if isinstance(value, ActivityRecord):
            value = activity_dict(value)
        elif isinstance(value, Usage):
            value = {name: getattr(value, name) for name in _names(Usage)}
        data[name] = value
    return data


def event_payload(event: Event) -> tuple[dict[str, Any], str]:
    """The event as a dict and as the JSON text ``Event.to_json`` writes."""
    data = event_dict(event)
    return data, _ENCODER.encode(data)
