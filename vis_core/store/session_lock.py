"""One Vis process at a time holds a session open: an advisory lock per session id."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from vis_core.paths import private_dir


class SessionInUse(LookupError):
    """Another Vis process has the session open."""


class SessionLocks:
    """The session locks of this process (re-entrant: its opening holds it, then the session)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._held: dict[str, tuple[int, int]] = {}  # session id: (fd, count)
        self._lock = threading.Lock()

    def acquire(self, session_id: str) -> None:
        """Hold ``session_id``; :class:`SessionInUse` names the process that has it."""
        with self._lock:
            if session_id in self._held:
                fd, count = self._held[session_id]
                self._held[session_id] = (fd, count + 1)
                return
            path = private_dir(self.folder) / f"{session_id}.lock"
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                os.close(fd)
                raise SessionInUse(
                    f"session {session_id[:8]} is open in another Vis (process {holder}); "
                    "close it there first, or open another session. It was not opened here, "
                    "so nothing in it can be changed by two apps at once."
                ) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            self._held[session_id] = (fd, 1)

    def release(self, session_id: str) -> None:
        with self._lock:
            held = self._held.get(session_id)
            if held is None:
                return
            fd, count = held
            if count > 1:
                self._held[session_id] = (fd, count - 1)
                return
            del self._held[session_id]
            os.close(fd)  # releases the lock

    def release_all(self) -> None:
        with self._lock:
            for fd, _ in self._held.values():
                os.close(fd)
            self._held.clear()
