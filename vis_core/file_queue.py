"""The per-file mutation queue every writer of a file joins (``patch`` and
``vis.file_mutation_queue``): one holder at a time per real path on an event loop, and the
folder ``flock`` every Vis process takes before it rewrites a file. Stdlib only."""

from __future__ import annotations

import asyncio
import fcntl
import os
import weakref
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager

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
