"""Exact Python source for literal defaults, within a 4,096-character, eight-level budget."""

from __future__ import annotations

import enum
import math
from typing import Any

SOURCE_BUDGET = 4096
"""Longest default source rendered; longer defaults show as ``...``."""

DEPTH_BUDGET = 8
"""Deepest container nesting rendered; deeper defaults show as ``...``."""


class _Opaque(Exception):
    """The value (or part of it) has no exact literal spelling within the budget."""


def default_source(value: Any) -> str | None:
    """Python source that rebuilds ``value`` exactly, or ``None`` for an opaque default.

    Only exact built-in literal types are rendered (never subclasses, custom ``repr()``
    or factories), and an Enum member as its value (what crosses for it); nonfinite
    numbers, cycles and values past the budget are opaque.
    """
    parts: list[str] = []
    budget = [SOURCE_BUDGET]
    try:
        _render(value, parts, budget, depth=0, active=set())
    except (_Opaque, ValueError, RecursionError):
        return None
    return "".join(parts)


def _emit(text: str, parts: list[str], budget: list[int]) -> None:
    budget[0] -= len(text)
    if budget[0] < 0:
        raise _Opaque
    parts.append(text)


def _scalar(value: Any) -> str | None:
    kind = type(value)
    if value is None or value is Ellipsis:
        return "None" if value is None else "Ellipsis"
    if kind is bool:
        return "True" if value else "False"
    if kind is int:
        if value.bit_length() > SOURCE_BUDGET * 4:
            raise _Opaque
        return repr(value)
    if kind is float or kind is complex:
        if not (math.isfinite(value.real) and math.isfinite(value.imag)):
            raise _Opaque
        return repr(value)
    if kind is str or kind is bytes:
        if len(value) > SOURCE_BUDGET:
            raise _Opaque
        return repr(value)
    return None


def _render(value: Any, parts: list[str], budget: list[int], depth: int, active: set[int]) -> None:
    if isinstance(value, enum.Enum):
        value = value.value
    text = _scalar(value)
    if text is not None:
        _emit(text, parts, budget)
        return
    kind = type(value)
    if kind not in (tuple, list, dict, set):
        raise _Opaque
    if depth >= DEPTH_BUDGET or id(value) in active:
        raise _Opaque
    active.add(id(value))
    try:
        if kind is dict:
            _emit("{", parts, budget)
            for index, (key, item) in enumerate(value.items()):
                if index:
                    _emit(", ", parts, budget)
                _render(key, parts, budget, depth + 1, active)
                _emit(": ", parts, budget)
                _render(item, parts, budget, depth + 1, active)
            _emit("}", parts, budget)
            return
        if kind is set and not value:
            _emit("set()", parts, budget)
            return
        opening, closing = {tuple: ("(", ")"), list: ("[", "]"), set: ("{", "}")}[kind]
        _emit(opening, parts, budget)
        for index, item in enumerate(value):
            if index:
                _emit(", ", parts, budget)
            _render(item, parts, budget, depth + 1, active)
        if kind is tuple and len(value) == 1:
            _emit(",", parts, budget)
        _emit(closing, parts, budget)
    finally:
        active.discard(id(value))
