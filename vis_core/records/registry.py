"""Which live class a record type names: (owner extension, qualified name) → class.

The extension loader calls :func:`replace_owner` after every (re)load with the dataclasses
the extension defines (``classes_in_module`` collects them from its entry module). A record
returned before ``/reload`` carries its owner and qualified name, so when it comes back to a
tool whose parameter does not name a class (unannotated, ``Any`` or ``object``) it is rebuilt
as the reloaded class. :func:`encode_result` also registers each class it encodes for the
calling tool's owner, last writer wins, so classes from helper modules are covered too.
"""

from __future__ import annotations

import dataclasses
import threading
import types
import weakref
from collections.abc import Iterable

_lock = threading.Lock()
_classes: dict[tuple[str, str], type] = {}
_owners: weakref.WeakKeyDictionary[type, str] = weakref.WeakKeyDictionary()


def register(owner: str, cls: type) -> None:
    """Make ``cls`` the live class for ``(owner, cls.__qualname__)``."""
    if not isinstance(cls, type):
        raise TypeError(f"records.registry.register needs a class, got {type(cls).__name__}")
    with _lock:
        _classes[(owner, cls.__qualname__)] = cls
        _owners[cls] = owner


def replace_owner(owner: str, classes: Iterable[type]) -> None:
    """Forget every class of ``owner`` and register ``classes`` instead (call after a reload)."""
    fresh = list(classes)
    with _lock:
        for key in [k for k in _classes if k[0] == owner]:
            del _classes[key]
        for cls in fresh:
            _classes[(owner, cls.__qualname__)] = cls
            _owners[cls] = owner


def lookup(owner: str | None, qualname: str | None) -> type | None:
    """The live class registered for ``(owner, qualname)``, or ``None``."""
    if owner is None or qualname is None:
        return None
    with _lock:
        return _classes.get((owner, qualname))


def owner_of(cls: type) -> str | None:
    """The owner ``cls`` was registered under, or ``None``."""
    with _lock:
        return _owners.get(cls)


def classes_in_module(module: types.ModuleType) -> list[type]:
    """Dataclasses defined in ``module``, including ones nested in its classes."""
    found: list[type] = []
    seen: set[int] = set()

    def visit(namespace: dict[str, object]) -> None:
        for value in list(namespace.values()):
            if (
                isinstance(value, type)
                and value.__module__ == module.__name__
                and id(value) not in seen
            ):
                seen.add(id(value))
                if dataclasses.is_dataclass(value):
                    found.append(value)
                visit(dict(vars(value)))

    visit(dict(vars(module)))
    return found
