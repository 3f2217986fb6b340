"""The one bridge between a thread and the process's event loop, and tasks kept until they end."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable, Coroutine, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


def running_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop running in this thread, or None."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def on_loop(loop: asyncio.AbstractEventLoop | None) -> bool:
    """Whether this thread runs ``loop`` now."""
    return loop is not None and running_loop() is loop


def keep(tasks: set[asyncio.Task[Any]], task: asyncio.Task[Any]) -> asyncio.Task[Any]:
    """Hold ``task`` in its owner's ``tasks`` until it ends (the loop keeps only a weak one)."""
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task


async def end_tasks(tasks: Iterable[asyncio.Future[Any]], *, cancel: bool = True) -> None:
    """What an owner's close does with the tasks it kept: cancel them (unless ``cancel`` is
    False: let them finish), then wait until each has ended (their outcomes are their own)."""
    pending = list(tasks)
    if cancel:
        for task in pending:
            task.cancel()
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)


def run_on_loop(loop: asyncio.AbstractEventLoop | None, coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` on ``loop`` from a thread and wait for it: the synchronous face of op
    hooks, for the host's own threads (a file tool's, a draft's)."""
    if loop is None or loop.is_closed():
        coro.close()
        raise RuntimeError("the Vis host is not running any more; the call was not made")
    if on_loop(loop):
        coro.close()
        raise RuntimeError(
            "this call waits until Vis's event loop has run it, so it cannot run on that loop; "
            "await the coroutine instead"
        )
    return asyncio.run_coroutine_threadsafe(coro, loop).result()


def post(
    loop: asyncio.AbstractEventLoop | None,
    coro: Coroutine[Any, Any, Any],
    tasks: set[asyncio.Task[Any]],
    *,
    wait: float | None = None,
) -> bool:
    """Run ``coro`` on ``loop`` without blocking it: on the loop, as a task kept in ``tasks``;
    from a thread, waiting ``wait`` seconds for it (None: not at all). False when it did not
    end in that time, or ``loop`` is gone (``coro`` is not run)."""
    if loop is None or loop.is_closed():
        coro.close()
        return False
    if on_loop(loop):
        keep(tasks, loop.create_task(coro))
        return True
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    if wait is None:
        return True
    try:
        future.result(wait)
    except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
        return False
    return True


async def in_own_thread(name: str, function: Callable[[], T]) -> T:
    """``function()`` in a daemon thread named ``name``, awaited: for blocking work the
    process's exit must not wait for (an SDK's import, 1-3 s of CPU), which
    ``asyncio.to_thread``'s pool would hold the exit for."""
    done: concurrent.futures.Future[T] = concurrent.futures.Future()

    def run() -> None:
        if done.set_running_or_notify_cancel():
            try:
                done.set_result(function())
            except BaseException as exc:  # the awaiting task raises it
                done.set_exception(exc)

    threading.Thread(target=run, name=name, daemon=True).start()
    return await asyncio.wrap_future(done)
