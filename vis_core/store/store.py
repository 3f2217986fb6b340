"""The ``Store``: the event log with its projections, and every table of the Vis database."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vis_core.events import Event, StoredEvent, TurnStarted, stored_form
from vis_core.paths import VisPaths
from vis_core.store.attachments import AttachmentsMixin
from vis_core.store.database import Database, StoreError
from vis_core.store.drafts import DraftsMixin
from vis_core.store.extras import ExtrasMixin
from vis_core.store.file_versions import FileVersionsMixin
from vis_core.store.folds import FoldsMixin
from vis_core.store.projection import project, project_many
from vis_core.store.schema import SESSION_EVENTS
from vis_core.store.search import SearchMixin
from vis_core.store.sessions import SessionsMixin
from vis_core.store.writer import StoreWriter

# Rewrites an event before it is written (settings install one that redacts secrets).
EventRedactor = Callable[[Event, dict[str, Any], str], tuple[Event, dict[str, Any], str]]
_INSERT_EVENT = "INSERT INTO events (session_id, type, data, created) VALUES (?, ?, ?, ?)"
_PREVIOUS_SESSION = "SELECT session_id FROM events WHERE seq < ? ORDER BY seq DESC LIMIT 1"
_START_RUN = "INSERT INTO event_runs (start, session_id) VALUES (?, ?)"
LastEvent = tuple[int, str] | None  # (seq, session) of the last event this process wrote


class Store(
    SessionsMixin,
    ExtrasMixin,
    AttachmentsMixin,
    SearchMixin,
    FoldsMixin,
    DraftsMixin,
    FileVersionsMixin,
):
    """The Vis database. Thread-safe: one connection behind a lock, short transactions.

    ``append`` commits an event and its projections before it returns; ``submit`` queues
    events for the store's writer thread, which commits them off the caller's event loop.
    Either way the agent publishes an event once committed, so a crash cannot lose it.
    """

    def __init__(self, path: Path | str | None = None, **options: Any) -> None:
        """``options``: :class:`Database`'s (its busy timeout, the schema's migrations and
        checkpoint.py's figures by default; tests pass others)."""
        self.path = Path(path) if path is not None else VisPaths.from_env().db_file
        self._db = Database(self.path, **options)
        self.redactor: EventRedactor | None = None
        # secrets out of free text saved outside events: titles, prompts, their search index
        self.text_redactor: Callable[[str], str] | None = None
        self._last: LastEvent = None
        self.writer = StoreWriter(self._commit, str(self.path))
        self._db.before_read(self.writer.settle)  # a read sees what was written before it

    def _payload(self, event: Event) -> tuple[Event, dict[str, Any], str]:
        event, data, payload = stored_form(event)
        if self.redactor is not None:
            return self.redactor(event, data, payload)
        return event, data, payload

    def before_read(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Call ``hook`` before each read of the database (an event bus commits the events
        it holds); returns the function that removes it."""
        return self._db.before_read(hook)

    def close(self, *, exiting: bool = False) -> None:
        """Commit what the writer has queued, then close the database (``exiting``: see
        :meth:`Database.close`)."""
        self.writer.close()
        self._db.close(exiting=exiting)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the event log -------------------------------------------------------------------

    def append(self, event: Event) -> int:
        """Log ``event``, update the projections and commit, all in one transaction; its seq."""
        event, data, payload = self._payload(event)
        seq = self._db.call_write(
            f"append a {event.type} event", _write, event, data, payload, time.time(), self._last
        )
        self._last = (seq, event.session_id)  # committed
        return seq

    def append_many(self, events: Iterable[Event]) -> list[int]:
        """Append several events in one transaction (all or none); their seqs in order."""
        prepared = [self._payload(event) for event in events]
        if not prepared:
            return []
        now = time.time()
        with (
            self._db.write(f"append {len(prepared)} events") as conn,
            _known_session(conn, [event for event, *_ in prepared]),
        ):
            seqs = _log_many(conn, prepared, now, self._last)
            pairs = zip(seqs, prepared, strict=True)
            logged = [(seq, event, data) for seq, (event, data, _payload) in pairs]
            project_many(conn, logged, now)
        self._last = (seqs[-1], prepared[-1][0].session_id)  # committed
        return seqs

    def submit(self, events: Sequence[Event]) -> Future[list[int]]:
        """Queue ``events`` for the writer thread (see :class:`StoreWriter`); the future of
        their seqs, set once they are committed, in the order submitted."""
        return self.writer.submit(events)

    def _commit(self, events: list[Event]) -> list[int]:
        return [self.append(events[0])] if len(events) == 1 else self.append_many(events)

    def events(
        self,
        session_id: str,
        after_seq: int = 0,
        limit: int | None = None,
        *,
        types: Collection[str] | None = None,
    ) -> list[StoredEvent]:
        """A session's logged events with ``seq > after_seq``, in order; only those ``types``
        when given (the rows of other types are not even read)."""
        with self._db.read("read the event log") as conn:
            return _events(conn, session_id, after_seq, limit, types)

    def session_so_far(self, session_id: str) -> SessionSoFar:
        """What the store holds of ``session_id`` now, in one snapshot, for a front end that
        goes on with its live events (see :class:`SessionSoFar`)."""
        with self._db.read("read the running turn") as conn:
            (seen,) = conn.execute("SELECT coalesce(max(seq), 0) FROM events").fetchone()
            turns = conn.execute(
                "SELECT id, status FROM turns WHERE session_id = ?", (session_id,)
            ).fetchall()
            ended = frozenset(turn_id for turn_id, status in turns if status != "running")
            running = {turn_id for turn_id, status in turns if status == "running"}
            events: list[StoredEvent] = []
            if running:
                for row in _events(conn, session_id, 0, None, [TurnStarted.type]):
                    if getattr(row.event, "turn_id", None) in running:
                        events = _events(conn, session_id, row.seq - 1, None, None)
                        break
        return SessionSoFar(ended, events, seen)


@dataclass(frozen=True)
class SessionSoFar:
    """What the store held of a session at one moment: the turns that had ended, the
    events from the start of the turn still running then (none when none ran), and the
    seq of the last event written then, of any session (a later event has a larger one)."""

    ended: frozenset[str]
    running: list[StoredEvent]
    seen: int


def _events(
    conn: sqlite3.Connection,
    session_id: str,
    after_seq: int,
    limit: int | None,
    types: Collection[str] | None,
) -> list[StoredEvent]:
    params: dict[str, Any] = {
        "session": session_id,
        "first": after_seq + 1,
        "limit": -1 if limit is None else limit,
    }
    only = ""
    if types is not None:
        params.update({f"t{i}": name for i, name in enumerate(types)})
        only = f" AND e.type IN ({', '.join(f':t{i}' for i in range(len(types)))})"
    rows = conn.execute(
        f"SELECT e.seq, e.session_id, e.type, e.data, e.created {SESSION_EVENTS}{only} "
        "ORDER BY e.seq LIMIT :limit",
        params,
    ).fetchall()
    return [StoredEvent(*row) for row in rows]


def _write(
    conn: sqlite3.Connection,
    event: Event,
    data: dict[str, Any],
    payload: str,
    now: float,
    last: LastEvent,
) -> int:
    """Log ``event`` and project it; ``last``: the event this process wrote just before."""
    with _known_session(conn, [event]):
        seq = _log(conn, event, payload, now, last)
        project(conn, seq, event, data, now)
    return seq


def _log(conn: sqlite3.Connection, event: Event, payload: str, now: float, last: LastEvent) -> int:
    """Log ``event`` (starting a run when the row before is another session's); its seq.
    ``last`` is the event written just before by this process, if known."""
    seq = conn.execute(_INSERT_EVENT, (event.session_id, event.type, payload, now)).lastrowid
    assert seq is not None
    _open_run(conn, seq, event.session_id, last)
    return seq


def _open_run(conn: sqlite3.Connection, seq: int, session_id: str, last: LastEvent) -> None:
    """Start a run at ``seq`` when the row before it is another session's; ``last``: the event
    this process wrote just before, if known (then no read is needed)."""
    if last != (seq - 1, session_id):  # else the row before is this session's: same run
        previous = conn.execute(_PREVIOUS_SESSION, (seq,)).fetchone()
        if previous is None or previous[0] != session_id:
            conn.execute(_START_RUN, (seq, session_id))  # checks that the session exists


def _log_many(
    conn: sqlite3.Connection,
    prepared: list[tuple[Event, dict[str, Any], str]],
    now: float,
    last: LastEvent,
) -> list[int]:
    """Log ``events`` in one statement, as :func:`_log` one by one would; their seqs. Within
    the transaction nothing else writes, so the rows take the seqs after the last one in turn
    (the largest seq plus one each); runs start where :func:`_log` would start them."""
    rows = [(event.session_id, event.type, payload, now) for event, _data, payload in prepared]
    conn.executemany(_INSERT_EVENT, rows)
    (end,) = conn.execute("SELECT last_insert_rowid()").fetchone()
    seqs = list(range(end - len(rows) + 1, end + 1))
    for seq, (session_id, *_) in zip(seqs, rows, strict=True):
        _open_run(conn, seq, session_id, last)
        last = (seq, session_id)
    return seqs


@contextmanager
def _known_session(conn: sqlite3.Connection, events: Iterable[Event]) -> Iterator[None]:
    """Name the missing session when a write of ``events`` breaks a foreign key."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        if "FOREIGN KEY" not in str(exc):
            raise
        missing = [
            event
            for event in events
            if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (event.session_id,)).fetchone()
            is None
        ]
        event = missing[0] if missing else next(iter(events))
        raise StoreError(
            f"cannot append a {event.type} event: there is no session {event.session_id!r} "
            "in the Vis database; create the session with create_session first"
        ) from exc
