"""``vis.file_mutation_queue(path)``: the per-file queue ``patch`` uses, for extension writes.

Hold it around a whole read-modify-write of one file, as a ``with`` or ``async with`` block.
It is keyed by the file's real path (symlink aliases share one queue) and takes the advisory
``flock`` on the file's folder that the session's ``patch`` (and every Vis process) takes
before it rewrites a file there, so a ``patch`` and an extension write of one file never lose
each other's change. Re-entering it for a path already held in the same thread or task is a
no-op (``vis.fs.write`` inside the block does not wait on itself).
Do not call ``vis.tools.patch`` on a file of the same folder inside the block: it would wait
for the block to end.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from pathlib import Path

from vis_core import file_queue

_held: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "vis_file_mutations_held", default=frozenset()
)


def mutation_key(path: str | os.PathLike[str]) -> str:
    """The real path of ``path`` (relative paths start at the session's working copy)."""
    from vis_core.extension.fs import _path

    return os.path.realpath(_path(path))


class FileMutationQueue:
    """One use of the queue of a file; a sync and an async context manager."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.key = mutation_key(path)
        self._fd: int | None = None  # holds the folder's flock
        self._token: contextvars.Token[frozenset[str]] | None = None

    def _take(self, fd: int) -> str:
        self._fd = fd
        self._token = _held.set(_held.get() | {self.key})
        return self.key

    def _release(self) -> None:
        if self._token is not None:
            _held.reset(self._token)
            self._token = None
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)  # closing the descriptor releases the lock

    def __enter__(self) -> str:
        if self.key in _held.get():
            return self.key
        return self._take(file_queue.lock_folder_of(self.key))

    def __exit__(self, *_: object) -> None:
        self._release()

    async def __aenter__(self) -> str:
        if self.key in _held.get():
            return self.key
        return self._take(await asyncio.to_thread(file_queue.lock_folder_of, self.key))

    async def __aexit__(self, *_: object) -> None:
        self._release()


def file_mutation_queue(path: str | os.PathLike[str]) -> FileMutationQueue:
    """Hold the per-file queue of ``path`` for a whole read-modify-write (``with`` or
    ``async with``); the value of the block is the real path."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"vis.file_mutation_queue(path) takes a path, got {type(path).__name__}")
    return FileMutationQueue(Path(path))
