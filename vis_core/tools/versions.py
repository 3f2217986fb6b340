"""What the model saw: numbered versions of each file per session, and the per-file write queue."""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

DEFAULT_KEEP = 32


@dataclass(frozen=True)
class FileVersion:
    """One observed content of a file: its number, text and SHA-256."""

    number: int
    text: str
    digest: str


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


class FileVersions:
    """Versions per real path for one session; a new number whenever the content changed.

    The newest ``keep`` versions of each file are kept in memory for the session's lifetime,
    so a ``patch`` against any of them can be rebased onto the file as it is now.
    """

    def __init__(self, keep: int = DEFAULT_KEEP) -> None:
        if keep < 1:
            raise ValueError("FileVersions keep must be at least 1")
        self._keep = keep
        self._files: dict[str, OrderedDict[int, FileVersion]] = {}
        self._next: dict[str, int] = {}
        self._lock = threading.Lock()

    def observe(self, realpath: str, text: str) -> int:
        """The version number of ``text`` as the file's current content (new if it changed)."""
        digest = _digest(text)
        with self._lock:
            kept = self._files.setdefault(realpath, OrderedDict())
            if kept:
                newest = next(reversed(kept.values()))
                if newest.digest == digest:
                    return newest.number
            number = self._next.get(realpath, 0) + 1
            self._next[realpath] = number
            kept[number] = FileVersion(number, text, digest)
            while len(kept) > self._keep:
                kept.popitem(last=False)
            return number

    def get(self, realpath: str, number: int) -> FileVersion | None:
        with self._lock:
            return self._files.get(realpath, {}).get(number)

    def latest(self, realpath: str) -> FileVersion | None:
        with self._lock:
            kept = self._files.get(realpath)
            return next(reversed(kept.values())) if kept else None

    def known_range(self, realpath: str) -> tuple[int, int] | None:
        """Oldest kept and newest issued version numbers, or ``None`` if never seen."""
        with self._lock:
            kept = self._files.get(realpath)
            if not kept:
                return None
            return next(iter(kept)), self._next[realpath]

    def forget(self, realpath: str) -> None:
        with self._lock:
            self._files.pop(realpath, None)


_queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


def mutation_key(path: str | os.PathLike[str]) -> str:
    """The queue key of a path: its ``realpath`` (symlink aliases share one queue)."""
    return os.path.realpath(os.fspath(path))


@asynccontextmanager
async def file_mutation_queue(path: str | os.PathLike[str]) -> AsyncIterator[str]:
    """Hold the one per-file queue of ``path``'s real path for a whole read-modify-write."""
    key = mutation_key(path)
    loop = asyncio.get_running_loop()
    locks = _queues.setdefault(loop, {})
    lock = locks.get(key)
    if lock is None:
        lock = locks[key] = asyncio.Lock()
    try:
        async with lock:
            yield key
    finally:
        if not lock.locked() and locks.get(key) is lock and not getattr(lock, "_waiters", None):
            del locks[key]


def lock_folder_of(real: str) -> int:
    """Take the advisory ``flock`` every Vis process takes before it rewrites ``real``; returns
    the descriptor that holds it (closing it releases the lock).

    The lock is on the file's folder (the nearest one that exists): a patch replaces the file
    with a new inode, so a lock on the file itself would not be seen by the next writer, while
    the folder's inode stays. ``patch`` and ``vis.file_mutation_queue`` both take it. Blocking:
    call it from a worker thread.
    """
    folder = os.path.dirname(real)
    while folder and not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    fd = os.open(folder or os.sep, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextmanager
def cross_process_lock(real: str) -> Iterator[None]:
    """Hold :func:`lock_folder_of` for ``real`` for the block (blocking: a worker thread)."""
    fd = lock_folder_of(real)
    try:
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
