"""Following a live session from what its store holds: no event missed, none shown twice."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from vis_core.agent.event_bus import EventBus, Kinds
from vis_core.events import Event, Notification, UsageReported
from vis_core.store.store import SessionSoFar

# what a front end takes from the session's state when it starts following (its totals), or
# says only as it happens (a toast): never read back from the store
NOT_READ_BACK: Kinds = (UsageReported, Notification)


class SoFar(Protocol):
    def session_so_far(self, session_id: str) -> SessionSoFar: ...


class SessionFollow:
    """One front end following a session that may be running a turn.

    Subscribed from its creation on, it holds the events published meanwhile; :meth:`read`
    (in a thread) gives the running turn's events as the store has them, which the front
    end shows; :meth:`start` then passes on the held events the read did not see (a larger
    seq), and every event after them, in order. Events of ``NOT_READ_BACK`` kinds are not
    read: each one published from the creation on is passed on."""

    def __init__(
        self, bus: EventBus, store: SoFar, session_id: str, callback: Callable[[Event], None]
    ) -> None:
        self._bus = bus
        self._store = store
        self._session_id = session_id
        self._callback = callback
        self._held: list[tuple[int, Event]] | None = []  # None once started
        self.seen = 0  # the last seq written at the read
        self.ended: frozenset[str] = frozenset()  # the turns that had ended at the read
        self.close = bus.subscribe(self._published)

    def _published(self, event: Event) -> None:
        if self._held is None:
            self._callback(event)
        else:
            self._held.append((self._bus.published_seq, event))

    def read(self) -> list[Event]:
        """The events of the turn running at this read, from its start (none when none ran);
        :attr:`ended` is set to the turns that had ended. Reads the store: in a thread."""
        so_far = self._store.session_so_far(self._session_id)
        self.seen, self.ended = so_far.seen, so_far.ended
        events = (row.event for row in so_far.running)
        return [event for event in events if not isinstance(event, NOT_READ_BACK)]

    def start(self) -> None:
        """Pass on the held events the read did not see, then each event as published."""
        held, self._held = self._held or [], None
        for seq, event in held:
            if seq > self.seen or isinstance(event, NOT_READ_BACK):
                self._callback(event)
