"""The store's writer: one thread commits queued events in order, off the event loop."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future

from vis_core.events import Event
from vis_core.store.database import StoreError

Commit = Callable[[list[Event]], list[int]]  # commits events in one transaction; their seqs
_Queued = tuple[list[Event], "Future[list[int]]"]


class StoreWriter:
    """Commits submitted events on a thread of its own, in the order submitted, so an event
    loop never waits on SQLite (a commit that waits for a busy database, a slow disk).

    Submissions that queue up while a commit runs are committed together in one transaction:
    a fast stream of events costs a few commits, not one each. Each submission's future holds
    its seqs once committed, or the :class:`StoreError` of the failed transaction (all of its
    submissions fail: none of their events is saved). :meth:`close` commits what is queued.
    """

    def __init__(self, commit: Commit, name: str) -> None:
        self._commit = commit
        self._name = name
        self._queue: deque[_Queued] = deque()
        self._ready = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, events: Sequence[Event]) -> Future[list[int]]:
        """Queue ``events`` for one commit after those queued before; the future of their seqs."""
        future: Future[list[int]] = Future()
        with self._ready:
            if self._closed:
                future.set_exception(StoreError(f"the Vis database {self._name} is closed"))
                return future
            self._queue.append((list(events), future))
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
            self._write(batch)

    def _write(self, batch: list[_Queued]) -> None:
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
