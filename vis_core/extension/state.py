"""``vis.state``: each extension's durable dict in the Vis database, keyed by extension name."""

from __future__ import annotations

import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vis_core.extension.acting import current_extension, loading_extension
from vis_core.extension.context import current_call
from vis_core.extension.place import require_trusted

if TYPE_CHECKING:
    from vis_core.store import Store

_MISSING = object()
_lock = threading.Lock()
_bound: list[Store] = []
_opened: dict[Path, Store] = {}
# Outside Vis (an entry file imported by a plain test) state lives in memory for the process.
_memory: dict[str, Any] = {}


def bind_store(store: Store) -> None:
    """Make ``store`` the database ``vis.state`` uses outside a call (the host does this)."""
    with _lock:
        if store not in _bound:
            _bound.append(store)


def unbind_store(store: Store) -> None:
    with _lock:
        if store in _bound:
            _bound.remove(store)


def _store() -> Store:
    from vis_core.extension_host.services import services_for

    store = services_for(current_call()).get("store")
    if store is not None:
        return store
    with _lock:
        if _bound:
            return _bound[-1]
        from vis_core.paths import VisPaths
        from vis_core.store import Store

        path = VisPaths.from_env().ensure().db_file
        store = _opened.get(path)
        if store is None:
            store = _opened[path] = Store(path)
        return store


def _check_key(key: object) -> str:
    if not isinstance(key, str):
        raise TypeError(f"vis.state keys must be strings, got {type(key).__name__}")
    return key


class ExtensionState(MutableMapping[str, Any]):
    """A dict-like store of plain data for the extension that uses it; ``None`` deletes a key."""

    def _owner(self) -> str | None:
        require_trusted("vis.state")
        name = current_extension()
        if name is not None:
            return name
        loading, _ = loading_extension()
        if loading:
            raise RuntimeError(
                "vis.state is keyed by extension name, so use it after "
                "vis.register_extension(vis.Extension(name=...)) in the entry file"
            )
        return None

    def __getitem__(self, key: str) -> Any:
        _check_key(key)
        owner = self._owner()
        value = (
            _memory.get(key, _MISSING)
            if owner is None
            else _store().state_get(owner, key, _MISSING)
        )
        if value is _MISSING:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: str, value: Any) -> None:
        _check_key(key)
        owner = self._owner()
        if owner is not None:
            _store().state_set(owner, key, value)
            return
        from vis_core.store.extras import to_json

        to_json(value, f"the state value {key!r}")  # the same plain-data rule as in Vis
        if value is None:
            _memory.pop(key, None)
        else:
            _memory[key] = value

    def __delitem__(self, key: str) -> None:
        _check_key(key)
        owner = self._owner()
        removed = (
            _memory.pop(key, _MISSING) is not _MISSING
            if owner is None
            else _store().state_delete(owner, key)
        )
        if not removed:
            raise KeyError(key)

    def _keys(self) -> list[str]:
        owner = self._owner()
        return sorted(_memory) if owner is None else _store().state_keys(owner)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _MISSING) is not _MISSING

    def clear(self) -> None:
        owner = self._owner()
        if owner is None:
            _memory.clear()
        else:
            _store().state_clear(owner)

    def to_dict(self) -> dict[str, Any]:
        """Every key and value at once (one database read)."""
        owner = self._owner()
        return dict(sorted(_memory.items())) if owner is None else _store().state_items(owner)

    def __repr__(self) -> str:
        return f"vis.state({self.to_dict()!r})"


state = ExtensionState()
