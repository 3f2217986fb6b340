"""One session's event bus: every event is committed (stored) first, then published in order."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Protocol

from vis_core.events import ActivityEnded, ActivityStarted, ActivityUpdated, Event

log = logging.getLogger(__name__)

HOLD = 0.05  # seconds an Activity's events may wait to be committed with later events
MAX_HELD = 64  # events held at most: this many are committed in one transaction
# an Activity's events: held to be committed with later ones
ACTIVITY_KINDS = (ActivityStarted, ActivityUpdated, ActivityEnded)
Subscriber = Callable[[Event], None]
Kinds = tuple[type[Event], ...]


class EventLog(Protocol):
    """Where events are committed (the store): ``submit`` queues them for its writer thread."""

    def submit(self, events: Sequence[Event]) -> Future[list[int]]: ...


@dataclass
class _Commit:
    """Events submitted in one transaction, waiting to be committed, then published."""

    events: list[Event]
    saved: Future[list[int]]
    shown: asyncio.Future[None] | None  # the emitter waits for it: set once published
    scheduled: threading.Event = field(default_factory=threading.Event)  # publishing is


class EventBus:
    """Created before anything else of a session, so whatever emits (the invoker, the
    extension services, the session itself) reaches the store and the subscribers, even
    while the session is still being assembled.

    Events are committed by the store's writer thread, off the loop, in the order emitted;
    an event is published on the loop only once committed, in that order, so a crash loses
    nothing that was shown. ``emit`` returns once its event is published; a failed commit
    raises its :class:`StoreError` there, and its events are not shown.

    An Activity's events (start, updates, end) wait up to ``HOLD`` seconds to be committed in
    one transaction with the events after them: a block that calls a tool a thousand times
    writes a few dozen transactions, not a thousand. Any other event (the block's or the
    turn's end) commits them first, and so do ``MAX_HELD`` of them, a read of the store (on
    any thread: what is read includes them) and the session's close.
    """

    def __init__(self, log: EventLog) -> None:
        self._log = log
        # (callback, kinds or None for every event), in the order they are called
        self._subscribers: list[tuple[Subscriber, Kinds | None]] = []
        self._watchers: list[tuple[Subscriber, Kinds | None]] = []  # ``subscribe(early=True)``
        # per event type, the callbacks of each group that want it (made on first use)
        self._routes: dict[type[Event], tuple[Subscriber, ...]] = {}
        self._early_routes: dict[type[Event], tuple[Subscriber, ...]] = {}
        self._lock = threading.Lock()  # held and pending: the loop and readers on any thread
        self._held: list[Event] = []  # Activity events not submitted yet
        self._pending: deque[_Commit] = deque()  # submitted, not published yet, in order
        self._hold_timer: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.published_seq = 0  # the store's seq of the event published last (or being)
        # the store: a read of it commits what is held first
        before_read: Callable[[Callable[[], None]], Callable[[], None]] | None
        before_read = getattr(log, "before_read", None)
        self._unhook = None if before_read is None else before_read(self.persist)
        writer = getattr(log, "writer", None)
        self._on_writer: Callable[[], bool] = getattr(writer, "on_writer_thread", lambda: False)

    def subscribe(
        self,
        callback: Subscriber,
        *,
        early: bool = False,
        first: bool = False,
        kinds: Kinds | None = None,
    ) -> Callable[[], None]:
        """Call ``callback`` with each event once it is committed; ``early``: as soon as it is
        emitted, before it is committed, for bookkeeping that must not lag behind the calls
        (which Activity is running) and never shows anything; ``first``: before the callbacks
        so far (the session's own state is up to date when the others look); ``kinds``: only
        with events of these types (and their subclasses), so a busy block's thousand
        Activities do not pass through callbacks that ignore them. Returns the function that
        unsubscribes it."""
        group = self._watchers if early else self._subscribers
        entry = (callback, kinds)
        with self._lock:
            if first:
                group.insert(0, entry)
            else:
                group.append(entry)
            self._routes, self._early_routes = {}, {}

        def unsubscribe() -> None:
            with self._lock:
                if entry in group:
                    group.remove(entry)
                self._routes, self._early_routes = {}, {}

        return unsubscribe

    def _route(self, kind: type[Event], early: bool) -> tuple[Subscriber, ...]:
        """The callbacks of one group that want events of type ``kind``, in order."""
        with self._lock:
            group, routes = (
                (self._watchers, self._early_routes) if early else (self._subscribers, self._routes)
            )
            route = tuple(c for c, kinds in group if kinds is None or issubclass(kind, kinds))
            routes[kind] = route
            return route

    async def emit(self, event: Event) -> None:
        """Commit the event (off the loop), then publish it: a crash never loses what was
        shown. Returns once published; a cancel of the caller does not stop either."""
        self._deliver(event, True)
        loop = self._loop = asyncio.get_running_loop()
        if isinstance(event, ACTIVITY_KINDS):
            with self._lock:
                self._held.append(event)
                full = len(self._held) >= MAX_HELD
            if not full:
                if self._hold_timer is None:
                    self._hold_timer = loop.call_later(HOLD, self.flush)
                return
            await self._commit(None, loop)
            return
        await self._commit(event, loop)

    def hold(self, event: ActivityStarted | ActivityUpdated | ActivityEnded) -> None:
        """:meth:`emit` an Activity's event from the loop without waiting: held for a later
        commit, or, once the held events are as many as one commit takes, submitted with them
        at once; either way in the order held, before whatever the loop runs next."""
        timed = self._hold_timer is not None  # else the first held since a commit
        if not timed:  # where a commit publishes (also one a read on another thread makes)
            self._loop = asyncio.get_running_loop()
        with self._lock:  # one look: the event, then the count
            self._held.append(event)
            full = len(self._held) >= MAX_HELD
        self._deliver(event, True)  # before it is published, which waits for the loop
        if full:
            self._cancel_timer()
            self._submit(None, None)  # published once committed, on the loop
        elif not timed:
            assert self._loop is not None
            self._hold_timer = self._loop.call_later(HOLD, self.flush)

    def _deliver(self, event: Event, early: bool) -> None:
        """Show ``event`` to the early watchers (``early``) or to the subscribers, in order;
        one that raises is logged, and the others still see it."""
        kind = type(event)
        callbacks = (self._early_routes if early else self._routes).get(kind)
        for callback in self._route(kind, early) if callbacks is None else callbacks:
            try:
                callback(event)
            except Exception:
                role = "watcher" if early else "subscriber"
                log.exception("event %s %r failed on %s", role, callback, event.type)

    def flush(self) -> None:
        """Submit the held Activity events now (their calls still run); they are published
        once committed."""
        self._cancel_timer()
        self._submit(None, None)

    def persist(self) -> None:
        """From any thread, before a read of the store: submit the held events and wait until
        every event emitted so far is committed, so the read sees them. They are published on
        the session's loop right after."""
        self._submit(None, None)
        with self._lock:
            last = self._pending[-1] if self._pending else None
        if last is not None and not self._on_writer():
            last.scheduled.wait()

    async def close(self) -> None:
        """Commit and publish what is held; stop committing before reads (the session closed)."""
        self._cancel_timer()
        try:
            await self._commit(None, asyncio.get_running_loop())
        except Exception:
            log.exception("could not save the events of running or ended Activities")
        if self._unhook is not None:
            self._unhook()
            self._unhook = None

    def _cancel_timer(self) -> None:
        timer, self._hold_timer = self._hold_timer, None
        if timer is not None:
            timer.cancel()

    async def _commit(self, event: Event | None, loop: asyncio.AbstractEventLoop) -> None:
        """Submit the held events and ``event`` in one transaction; return once published."""
        self._cancel_timer()
        shown = self._submit(event, loop)
        if shown is None:
            return
        try:
            await asyncio.shield(shown)
        except asyncio.CancelledError:  # saved and shown all the same; a failure is logged
            shown.add_done_callback(_log_failure)
            raise

    def _submit(
        self, event: Event | None, loop: asyncio.AbstractEventLoop | None
    ) -> asyncio.Future[None] | None:
        """Submit what is held and ``event``; with ``loop``, the future set once published."""
        with self._lock:
            held, self._held = self._held, []
            events = held if event is None else [*held, event]
            if not events:
                return None
            shown = None if loop is None else loop.create_future()
            commit = _Commit(events, self._log.submit(events), shown)
            self._pending.append(commit)
        scheduled = commit.scheduled  # not the commit: its future would hold it in a cycle
        commit.saved.add_done_callback(lambda _: self._saved(scheduled))
        return shown

    def _saved(self, scheduled: threading.Event) -> None:
        """On the writer's thread (or the submitter's): publish on the loop, next."""
        loop = self._loop
        try:
            if loop is not None and not loop.is_closed():
                loop.call_soon_threadsafe(self._publish_saved)
        except RuntimeError:  # the loop closed meanwhile: nothing is shown any more
            pass
        finally:
            scheduled.set()

    def _publish_saved(self) -> None:
        """Publish the committed events at the head of the queue, in order."""
        while True:
            with self._lock:
                if not self._pending or not self._pending[0].saved.done():
                    return
                commit = self._pending.popleft()
                error = commit.saved.exception()
                if error is not None:  # not saved, not shown: the next commit retries them
                    kept = [event for event in commit.events if isinstance(event, ACTIVITY_KINDS)]
                    self._held[:0] = kept
            if error is not None:
                self._fail(commit, error)
                continue
            seqs = commit.saved.result() or ()
            for index, event in enumerate(commit.events):
                if index < len(seqs):  # a subscriber reads the seq of the event it is given
                    self.published_seq = seqs[index]
                self._deliver(event, False)
            if commit.shown is not None and not commit.shown.done():
                commit.shown.set_result(None)

    @staticmethod
    def _fail(commit: _Commit, error: BaseException) -> None:
        if commit.shown is not None and not commit.shown.done():
            commit.shown.set_exception(error)
        else:
            log.error("could not save %d events", len(commit.events), exc_info=error)


def _log_failure(shown: asyncio.Future[None]) -> None:
    """The commit of a cancelled emitter failed: nobody else hears of it."""
    if not shown.cancelled() and (error := shown.exception()) is not None:
        log.error("could not save an event", exc_info=error)
