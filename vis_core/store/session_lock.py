"""One Vis process at a time holds a session open: an advisory lock per session id."""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from vis_core.paths import private_dir

LEFT = " left"  # after the pid in a lock file: that Vis shows another session


class SessionInUse(LookupError):
    """Another Vis process has the session open."""


class SessionLocks:
    """The session locks of this process (re-entrant: its opening holds it, then the session).

    A lock file names the process holding it, and ``left`` when that Vis shows another
    session while this one finishes what it runs (its turn, its commands): whoever is
    refused is told which."""

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
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").split()
                os.close(fd)
                raise SessionInUse(_in_use(session_id, holder)) from None
            os.ftruncate(fd, 0)
            os.pwrite(fd, str(os.getpid()).encode(), 0)
            self._held[session_id] = (fd, 1)

    def mark_left(self, session_id: str, left: bool) -> None:
        """Say in the lock of ``session_id`` (held) whether this Vis left it to finish what
        it runs (``left``) or shows it."""
        pid = str(os.getpid())
        with self._lock:
            held = self._held.get(session_id)
            if held is not None:  # one write, then a cut: a reader sees either content
                os.pwrite(held[0], f"{pid}{LEFT if left else ''}".encode(), 0)
                os.ftruncate(held[0], len(pid) + (len(LEFT) if left else 0))

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


def session_held(folder: Path, session_id: str) -> bool:
    """Whether a Vis (this one too) holds ``session_id`` open now (its turns may be running)."""
    try:
        fd = os.open(folder / f"{session_id}.lock", os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # a lock taken here goes with it
    return False


def _in_use(session_id: str, holder: list[str]) -> str:
    """Why ``session_id`` cannot be opened: the lock file's words ``holder`` (pid, ``left``)."""
    pid = holder[0] if holder else "unknown"
    if holder[1:] == [LEFT.strip()]:
        return (
            f"session {session_id[:8]} is still at work in another Vis (process {pid}), which "
            "shows another session now: its turn or a command it started still runs there, "
            "and the session is let go as soon as that ends. Open it then, or open another "
            "session. It was not opened here, so nothing in it can be changed by two apps at once."
        )
    return (
        f"session {session_id[:8]} is open in another Vis (process {pid}); close it there "
        "first, or open another session. It was not opened here, so nothing in it can be "
        "changed by two apps at once."
    )
