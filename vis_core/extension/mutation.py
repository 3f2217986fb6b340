"""``vis.file_mutation_queue(path)``: the per-file queue ``patch`` uses, for extension writes.

Hold it around a whole read-modify-write of one file, as a ``with`` or ``async with`` block.
It is keyed by the file's real path (symlink aliases share one queue) and joins the queue the
session's ``patch`` holds, so a ``patch`` and an extension write of one file never lose each
other's change. It also takes an advisory ``flock`` on the file's folder, the lock other Vis
processes take before they rewrite a file there. Re-entering it for a path already held in
the same thread or task is a no-op (``vis.fs.write`` inside the block does not wait on itself).
Do not call ``vis.tools.patch`` on a file of the same folder inside the block: it would wait
for the block to end.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from vis_core import file_queue
from vis_core.system.loops import on_loop

_held: contextvars.ContextVar[frozenset[str]] = contextvars.ContextVar(
    "vis_file_mutations_held", default=frozenset()
)


def mutation_key(path: str | os.PathLike[str]) -> str:
    """The real path of ``path`` (relative paths start at the session's working copy)."""
    from vis_core.extension.fs import _path

    return os.path.realpath(_path(path))


def _host_loop() -> asyncio.AbstractEventLoop | None:
    """The loop the session's ``patch`` queues on, when this process serves a session."""
    from vis_core.extension.runtime import current_runtime

    return current_runtime().mutation_loop()


def _join_host_queue(key: str) -> Callable[[], None] | None:
    """Enter ``patch``'s queue for ``key`` from a thread; returns how to leave it."""
    loop = _host_loop()
    if loop is None:
        return None
    if on_loop(loop):
        raise RuntimeError(
            "on Vis's own event loop, use `async with vis.file_mutation_queue(path)`"
        )
    queue = file_queue.file_mutation_queue(key)
    asyncio.run_coroutine_threadsafe(queue.__aenter__(), loop).result()

    def leave() -> None:
        asyncio.run_coroutine_threadsafe(queue.__aexit__(None, None, None), loop).result()

    return leave


class FileMutationQueue:
    """One use of the queue of a file; a sync and an async context manager."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.key = mutation_key(path)
        self._leave: list[Callable[[], Any]] = []
        self._token: contextvars.Token[frozenset[str]] | None = None
        self._queue: Any = None  # patch's own queue, entered on Vis's loop

    def _take(self, leave_queue: Callable[[], Any] | None, fd: int) -> str:
        if leave_queue is not None:
            self._leave.append(leave_queue)
        self._leave.append(lambda: os.close(fd))
        self._token = _held.set(_held.get() | {self.key})
        return self.key

    def _release(self) -> None:
        if self._token is not None:
            _held.reset(self._token)
            self._token = None
        while self._leave:
            self._leave.pop()()

    def __enter__(self) -> str:
        if self.key in _held.get():
            return self.key
        leave = _join_host_queue(self.key)
        try:
            fd = file_queue.lock_folder_of(self.key)
        except BaseException:
            if leave is not None:
                leave()
            raise
        return self._take(leave, fd)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._release()

    async def __aenter__(self) -> str:
        if self.key in _held.get():
            return self.key
        leave: Callable[[], Any] | None = None
        if asyncio.get_running_loop() is _host_loop():
            self._queue = file_queue.file_mutation_queue(self.key)
            await self._queue.__aenter__()
        else:
            leave = await asyncio.to_thread(_join_host_queue, self.key)
        try:
            fd = await asyncio.to_thread(file_queue.lock_folder_of, self.key)
        except BaseException:
            if leave is not None:
                await asyncio.to_thread(leave)
            await self._leave_queue()
            raise
        return self._take(leave, fd)

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._token is not None:
            _held.reset(self._token)
            self._token = None
        leave, self._leave = self._leave, []
        if leave:
            await asyncio.to_thread(lambda: [step() for step in reversed(leave)])
        await self._leave_queue()

    async def _leave_queue(self) -> None:
        queue, self._queue = self._queue, None
        if queue is not None:
            await queue.__aexit__(None, None, None)


def file_mutation_queue(path: str | os.PathLike[str]) -> FileMutationQueue:
    """Hold the per-file queue of ``path`` for a whole read-modify-write (``with`` or
    ``async with``); the value of the block is the real path."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(f"vis.file_mutation_queue(path) takes a path, got {type(path).__name__}")
    return FileMutationQueue(Path(path))
