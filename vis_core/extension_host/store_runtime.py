"""The SDK runtime of a Vis process with the database but no session (extensions loading in
the registration worker): ``vis.state`` in the store, the rest as outside Vis. Apart from the
host's runtime, which builds on it, so that the worker imports none of the session's events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from vis_core.extension.runtime import Runtime

if TYPE_CHECKING:
    from vis_core.store import Store


class StoreRuntime(Runtime):
    """A Vis process with the database but no session (extensions loading, the registration
    worker): state in the store; the rest as outside Vis (the log file, nothing shown to a
    person, attachments in memory)."""

    def __init__(self, store: Store | None = None) -> None:
        super().__init__()
        self._store = store

    @property
    def store(self) -> Store:
        """The database: the given one, else the one under ``VIS_HOME`` (opened once)."""
        with self._lock:
            if self._store is None:
                from vis_core.paths import VisPaths
                from vis_core.store import Store

                self._store = Store(VisPaths.from_env().ensure().db_file)
            return self._store

    # -- state -------------------------------------------------------------------------------
    def state_read(self, owner: str | None, key: str) -> tuple[bool, Any]:
        missing = object()
        value = self.store.state_get(_owner(owner), key, missing)
        return (False, None) if value is missing else (True, value)

    def state_write(self, owner: str | None, key: str, value: Any) -> None:
        self.store.state_set(_owner(owner), key, value)

    def state_delete(self, owner: str | None, key: str) -> bool:
        return self.store.state_delete(_owner(owner), key)

    def state_keys(self, owner: str | None) -> list[str]:
        return self.store.state_keys(_owner(owner))

    def state_items(self, owner: str | None) -> dict[str, Any]:
        return self.store.state_items(_owner(owner))

    def state_clear(self, owner: str | None) -> None:
        self.store.state_clear(_owner(owner))

    # -- sessions: the host's ----------------------------------------------------------------
    def list_sessions(self, search: str | None) -> list[dict[str, Any]]:
        raise RuntimeError(f"vis.list_sessions() {_NO_HOST}")

    def read_session(self, session_id: str | None) -> dict[str, Any]:
        raise RuntimeError(f"vis.read_session() {_NO_HOST}")

    def sessions(self) -> Any:
        raise RuntimeError(f"vis.sessions {_NO_HOST}")


_NO_HOST = "works only in a call from a Vis session (a tool, command or callback), not while "
_NO_HOST += "extensions load"


def _owner(owner: str | None) -> str:
    if owner is None:  # the SDK keeps the state of code of no extension in memory
        raise ValueError("vis.state in the store needs the name of an extension")
    return owner
