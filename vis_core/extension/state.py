"""``vis.state``: each extension's durable dict in the Vis database, keyed by extension name."""

from __future__ import annotations

from collections.abc import Iterator, MutableMapping
from typing import Any

from vis_core.extension.acting import current_extension, loading_extension
from vis_core.extension.place import require_trusted
from vis_core.extension.runtime import OUTSIDE, Runtime, current_runtime
from vis_core.model.plain import check_plain

_MISSING = object()


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

    def _where(self) -> tuple[str | None, Runtime]:
        """The owner and the runtime that keeps its state (code of no extension: memory)."""
        owner = self._owner()
        return owner, OUTSIDE if owner is None else current_runtime()

    def __getitem__(self, key: str) -> Any:
        _check_key(key)
        owner, runtime = self._where()
        found, value = runtime.state_read(owner, key)
        if not found:
            raise KeyError(key)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: str, value: Any) -> None:
        _check_key(key)
        owner, runtime = self._where()
        # checked here, where the value is the extension's own: Vis, in another process,
        # would see a stand-in of an object that is not plain data, and name that
        of = f" of extension {owner!r}" if owner is not None else ""
        check_plain(value, f"the state value {key!r}{of}")
        runtime.state_write(owner, key, value)

    def __delitem__(self, key: str) -> None:
        _check_key(key)
        owner, runtime = self._where()
        if not runtime.state_delete(owner, key):
            raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        owner, runtime = self._where()
        return iter(runtime.state_keys(owner))

    def __len__(self) -> int:
        owner, runtime = self._where()
        return len(runtime.state_keys(owner))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key, _MISSING) is not _MISSING

    def clear(self) -> None:
        owner, runtime = self._where()
        runtime.state_clear(owner)

    def to_dict(self) -> dict[str, Any]:
        """Every key and value at once (one database read)."""
        owner, runtime = self._where()
        return runtime.state_items(owner)

    def __repr__(self) -> str:
        return f"vis.state({self.to_dict()!r})"


state = ExtensionState()
