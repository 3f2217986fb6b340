"""One session's event bus: every event is committed (stored) first, then published in order."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from vis_core.events import ActivityStarted, Event

log = logging.getLogger(__name__)

HOLD_START = 0.05  # seconds an Activity's start may wait to be committed with its end
Subscriber = Callable[[Event], None]


class EventLog(Protocol):
    """Where events are committed (the store)."""

    def append(self, event: Event) -> int: ...


class EventBus:
    """Created before anything else of a session, so whatever emits (the invoker, the
    extension services, the session itself) reaches the store and the subscribers, even
    while the session is still being assembled.

    An Activity's start waits up to ``HOLD_START`` seconds to be committed in one transaction
    with the next event (most calls end sooner: with their end). It is published only once
    committed, and any later event commits it first, so the log and the front ends see the
    same order as without the wait.
    """

    def __init__(self, log: EventLog) -> None:
        self._log = log
        self._subscribers: list[Subscriber] = []
        self._watchers: list[Subscriber] = []  # ``subscribe(early=True)``
        self._held: list[Event] = []  # Activity starts not committed yet
        self._hold_timer: asyncio.TimerHandle | None = None

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
        if isinstance(event, ActivityStarted):
            self._held.append(event)
            if self._hold_timer is None:
                self._hold_timer = asyncio.get_running_loop().call_later(HOLD_START, self.flush)
            return
        self._commit(event)

    def flush(self) -> None:
        """Commit the held Activity starts now (their calls still run, or the session ends)."""
        self._hold_timer = None
        try:
            self._commit(None)
        except Exception:
            log.exception("could not save the start of a running Activity")

    def _commit(self, event: Event | None) -> None:
        """Commit the held starts and ``event`` in one transaction, then publish them."""
        held, self._held = self._held, []
        if self._hold_timer is not None:
            self._hold_timer.cancel()
            self._hold_timer = None
        events = held if event is None else [*held, event]
        if not events:
            return
        try:
            self._append(events)
        except BaseException:
            self._held = held + self._held  # not saved, not shown: the next event retries them
            raise
        for item in events:
            self._publish(item)

    def _append(self, events: Sequence[Event]) -> None:
        append_many = getattr(self._log, "append_many", None)
        if len(events) == 1 or append_many is None:
            for item in events:
                self._log.append(item)
        else:
            append_many(events)

    def _publish(self, event: Event) -> None:
        for callback in list(self._subscribers):
            try:
                callback(event)
            except Exception:
                log.exception("event subscriber %r failed on %s", callback, event.type)
