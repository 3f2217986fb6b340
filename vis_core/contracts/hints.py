"""Resolve tool-parameter and dataclass-field annotations one name at a time."""

from __future__ import annotations

import dataclasses
import inspect
import sys
import typing
import weakref
from collections.abc import Callable, Mapping
from typing import Any


class _Holder:
    """A bare object carrying one annotation, so ``get_type_hints`` resolves it alone."""

    def __init__(self, annotations: dict[str, Any]) -> None:
        self.__annotations__ = annotations


UNRESOLVED: Any = object()
"""Returned by :func:`resolve` when an annotation cannot be resolved."""


def resolve(annotation: Any, globalns: Mapping[str, Any], localns: Mapping[str, Any]) -> Any:
    """Resolve one annotation (string or object) or return :data:`UNRESOLVED`."""
    try:
        hints = typing.get_type_hints(
            _Holder({"value": annotation}), dict(globalns), dict(localns), include_extras=True
        )
    except Exception:  # any failure means "cannot resolve": the value stays a dict
        return UNRESOLVED
    return hints["value"]


def unwrap(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Follow ``__wrapped__`` (and bound methods) to the defining function.

    Raises ``ValueError`` for a cyclic ``__wrapped__`` chain.
    """
    target = getattr(fn, "__func__", fn)
    return inspect.unwrap(target)


def parameter_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """Resolved annotations of ``fn``'s parameters; unresolvable ones map to ``UNRESOLVED``."""
    inner = unwrap(fn)
    globalns = getattr(inner, "__globals__", None)
    if globalns is None:
        module = sys.modules.get(getattr(inner, "__module__", "") or "")
        globalns = vars(module) if module is not None else {}
    annotations = getattr(fn, "__annotations__", None) or getattr(inner, "__annotations__", {})
    hints: dict[str, Any] = {}
    for name, annotation in dict(annotations).items():
        if name == "return":
            continue
        hints[name] = resolve(annotation, globalns, {})
    return hints


_FIELD_CACHE: weakref.WeakKeyDictionary[type, dict[str, Any]] = weakref.WeakKeyDictionary()


def field_hints(cls: type) -> dict[str, Any]:
    """Resolved annotations of a dataclass's fields (``UNRESOLVED`` where resolution failed)."""
    cached = _FIELD_CACHE.get(cls)
    if cached is not None:
        return cached
    hints: dict[str, Any] = {}
    complete = True
    names = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    for klass in reversed(cls.__mro__):
        own = vars(klass).get("__annotations__", {})
        if not own:
            continue
        module = sys.modules.get(klass.__module__)
        globalns = vars(module) if module is not None else {}
        localns = dict(vars(klass))
        localns.setdefault(klass.__name__, klass)
        for name, annotation in own.items():
            if name not in names:
                continue
            value = resolve(annotation, globalns, localns)
            complete = complete and value is not UNRESOLVED
            hints[name] = value
    if complete:  # a later-defined class may resolve a forward reference next time
        _FIELD_CACHE[cls] = hints
    return hints
