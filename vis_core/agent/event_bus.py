"""One session's event bus: every event is committed (stored) first, then published in order."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from vis_core.events import ActivityEnded, ActivityStarted, ActivityUpdated, Event

log = logging.getLogger(__name__)

HOLD = 0.05  # seconds an Activity's events may wait to be committed with later events
MAX_HELD = 64  # events held at most: this many are committed in one transaction
_HELD_KINDS = (ActivityStarted, ActivityUpdated, ActivityEnded)
Subscriber = Callable[[Event], None]


class EventLog(Protocol):
    """Where events are committed (the store)."""

    def append(self, event: Event) -> int: ...


class EventBus:
    """Created before anything else of a session, so whatever emits (the invoker, the
    extension services, the session itself) reaches the store and the subscribers, even
    while the session is still being assembled.

    An Activity's events (start, updates, end) wait up to ``HOLD`` seconds to be committed in
    one transaction with the events after them: a block that calls a tool a thousand times
    writes a few dozen transactions, not a thousand. Any other event (the block's or the
    turn's end) commits them first, and so do ``MAX_HELD`` of them, a read of the store (on
    any thread: what is read includes them) and the session's close. An event is published
    only once committed, in the order emitted, so a crash loses nothing that was shown.
    """

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._subscribers: list[Subscriber] = []
        self._watchers: list[Subscriber] = []  # ``subscribe(early=True)``
        self._lock = threading.RLock()  # the held events: committed by the loop or a reader
        self._held: list[Event] = []  # Activity events not committed yet
        self._committed: deque[Event] = deque()  # committed, not published yet, in order
        self._hold_timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # the store: a read of it commits what is held first
        before_read: Callable[[Callable[[], None]], Callable[[], None]] | None
        before_read = getattr(log, "before_read", None)
        self._unhook = None if before_read is None else before_read(self.persist)

    def subscribe(
        self, callback: Subscriber, *, early: bool = False, first: bool = False
    ) -> Callable[[], None]:
        """Call ``callback`` with each event once it is committed; ``early``: as soon as it is
        emitted, before it is committed, for bookkeeping that must not lag behind the calls
        (which Activity is running) and never shows anything; ``first``: before the callbacks
        so far (the session's own state is up to date when the others look). Returns the
        function that unsubscribes it."""
        group = self._watchers if early else self._subscribers
        if first:
            group.insert(0, callback)
        else:
            group.append(callback)

        def unsubscribe() -> None:
            if callback in group:
                group.remove(callback)

        return unsubscribe

    async def emit(self, event: Event) -> None:
        """Commit the event, then publish it: a crash never loses what was shown."""
        for watcher in list(self._watchers):
            try:
                watcher(event)
            except Exception:
                log.exception("event watcher %r failed on %s", watcher, event.type)
        if isinstance(event, _HELD_KINDS):
            with self._lock:
                self._held.append(event)
                full = len(self._held) >= MAX_HELD
            if not full:
                if self._hold_timer is None:
                    self._loop = loop = asyncio.get_running_loop()
                    self._hold_timer = loop.call_later(HOLD, self.flush)
                return
            self._commit(None)
            return
        self._commit(event)

    def flush(self) -> None:
        """Commit the held Activity events now (their calls still run, or the session ends)."""
        try:
            self._commit(None)
        except Exception:
            log.exception("could not save the events of running or ended Activities")

    def persist(self) -> None:
        """Commit the held events from any thread (the store is about to be read); they are
        published on the session's loop right after."""
        with self._lock:
            if not self._held:
                return
            try:
                self._save(None)
            except Exception:  # kept: the next commit retries them
                log.exception("could not save the events of running or ended Activities")
                return
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._publish_committed)

    def close(self) -> None:
        """Commit what is held and stop committing before reads (the session closed)."""
        self.flush()
        if self._unhook is not None:
            self._unhook()
            self._unhook = None

    def _commit(self, event: Event | None) -> None:
        """Commit the held events and ``event`` in one transaction, then publish them."""
        timer, self._hold_timer = self._hold_timer, None
        if timer is not None:
            timer.cancel()
        with self._lock:
            self._save(event)
        self._publish_committed()

    def _save(self, event: Event | None) -> None:
        held, self._held = self._held, []
        events = held if event is None else [*held, event]
        if not events:
            return
        try:
            self._append(events)
        except BaseException:
            self._held = held + self._held  # not saved, not shown: the next event retries them
            raise
        self._committed.extend(events)

    def _append(self, events: Sequence[Event]) -> None:
        append_many = getattr(self._log, "append_many", None)
        if len(events) == 1 or append_many is None:
            for item in events:
                self._log.append(item)
        else:
            append_many(events)

    def _publish_committed(self) -> None:
        while self._committed:
            try:
                event = self._committed.popleft()
            except IndexError:  # published meanwhile by a call made from a subscriber
                return
            for callback in list(self._subscribers):
                try:
                    callback(event)
                except Exception:
                    log.exception("event subscriber %r failed on %s", callback, event.type)
