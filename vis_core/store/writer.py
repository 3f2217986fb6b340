"""The store's writer: one thread commits queued events and writes in order, off the loop."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import partial
from typing import Any, TypeVar

from vis_core.events import Event
from vis_core.store.database import StoreError
from vis_core.system.loops import running_loop

log = logging.getLogger(__name__)
T = TypeVar("T")
Commit = Callable[[list[Event]], list[int]]  # commits events in one transaction; their seqs
# events to commit (their seqs), or a write of another kind to run (its result)
_Queued = tuple[list[Event] | Callable[[], Any], "Future[Any]"]


class StoreWriter:
    """Commits submitted events on a thread of its own, in the order submitted, so an event
    loop never waits on SQLite (a commit that waits for a busy database, a slow disk).

    Submissions that queue up while a commit runs are committed together in one transaction:
    a fast stream of events costs a few commits, not one each. Each submission's future holds
    its seqs once committed, or the :class:`StoreError` of the failed transaction (all of its
    submissions fail: none of their events is saved). A write of another kind (:meth:`call`:
    a title, a state value, a settings override) runs alone, in its place in the order.
    :meth:`close` commits what is queued.
    """

    def __init__(self, commit: Commit, name: str) -> None:
        self._commit = commit
        self._name = name
        self._queue: deque[_Queued] = deque()
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._running: Future[Any] | None = None  # the last of the batch being written

    def submit(self, events: Sequence[Event]) -> Future[list[int]]:
        """Queue ``events`` for one commit after those queued before; the future of their seqs."""
        return self._queued(list(events))

    def call(self, write: Callable[[], T]) -> Future[T]:
        """Queue ``write`` (it commits a write of its own) after what is queued; its future."""
        return self._queued(write)

    def settle(self) -> None:
        """Wait until what was queued so far is written (a read sees it); not on the writer."""
        with self._ready:
            last = self._queue[-1][1] if self._queue else self._running
        if last is not None and not self.on_writer_thread():
            last.exception()  # waits; a failure is its submitter's

    def _queued(self, item: list[Event] | Callable[[], Any]) -> Future[Any]:
        future: Future[Any] = Future()
        with self._ready:
            if self._closed:
                future.set_exception(StoreError(f"the Vis database {self._name} is closed"))
                return future
            self._queue.append((item, future))
            self._start()
            self._ready.notify()
        return future

    def start(self) -> None:
        """Start the thread now rather than at the first submission (starting a thread waits
        for it to run: better while nothing else waits than in a turn's first event)."""
        with self._ready:
            if not self._closed:
                self._start()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._run, name=f"vis-store-writer {self._name}", daemon=True
            )
            self._thread.start()

    @property
    def started(self) -> bool:
        """Whether the thread started (with the first submission, or :meth:`start`)."""
        return self._thread is not None

    def on_writer_thread(self) -> bool:
        """Whether the caller is the writer's thread (it must not wait for itself)."""
        return self._thread is threading.current_thread()

    def close(self) -> None:
        """Commit what is queued, then end the thread; later submissions fail."""
        with self._ready:
            self._closed = True
            self._ready.notify()
            thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._queue and not self._closed:
                    self._ready.wait()
                if not self._queue:  # closed and drained
                    return
                batch = list(self._queue)
                self._queue.clear()
                self._running = batch[-1][1]
            events: list[tuple[list[Event], Future[Any]]] = []
            for item, future in batch:  # runs of events commit together, in order
                if isinstance(item, list):
                    events.append((item, future))
                    continue
                self._write(events)
                events = []
                try:
                    future.set_result(item())
                except BaseException as exc:  # its submitter's; the thread goes on
                    future.set_exception(exc)
            self._write(events)

    def _write(self, batch: list[tuple[list[Event], Future[Any]]]) -> None:
        if not batch:
            return
        try:
            seqs = self._commit([event for events, _ in batch for event in events])
        except BaseException as exc:  # reported to every submitter; the thread goes on
            for _, future in batch:
                future.set_exception(exc)
            return
        start = 0
        for events, future in batch:
            future.set_result(seqs[start : start + len(events)])
            start += len(events)


def off_the_loop(writer: StoreWriter, action: str, write: Callable[[], T]) -> T | None:
    """Run ``write`` (one committed write): called on an event loop's thread, on ``writer``'s
    thread, in order with the events queued there, returning None at once (a failure is
    logged; a read waits for the write first); elsewhere here, with its result or its error."""
    if running_loop() is None:
        return write()
    writer.call(write).add_done_callback(partial(_log_failure, action))
    return None


def _log_failure(action: str, future: Future[Any]) -> None:
    error = future.exception()
    if error is not None:
        log.error("could not %s: %s", action, error)
