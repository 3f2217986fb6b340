"""The SQLite connection of the store: opening checks, migrations, locking and transactions."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from vis_core.store.checkpoint import (
    CHECKPOINT_EVERY_ROWS,
    EXIT_LOG_BYTES,
    WRITER_AUTOCHECKPOINT_PAGES,
    Checkpointer,
)
from vis_core.store.schema import APPLICATION_ID, MIGRATIONS

SQLITE_MAGIC = b"SQLite format 3\x00"
T = TypeVar("T")
Migrations = tuple[tuple[str, ...], ...]  # statements per schema version, oldest first
_MOVE_AWAY = (
    "Vis left it unchanged. Move or rename it, or set VIS_HOME to another folder, and Vis "
    "creates a new database"
)


class StoreError(Exception):
    """The Vis database cannot be opened, read or written; the message says what to do."""


def _check_header(path: Path) -> None:
    """Refuse a file that exists but is not an SQLite database, before SQLite touches it."""
    if path.is_dir():
        raise StoreError(f"{path} is a folder, not a Vis database file. {_MOVE_AWAY}.")
    try:
        with path.open("rb") as handle:
            head = handle.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StoreError(
            f"cannot read the Vis database {path}: {exc}. Check its permissions."
        ) from exc
    if head and head != SQLITE_MAGIC:
        raise StoreError(f"{path} is not a Vis database (it is not an SQLite file). {_MOVE_AWAY}.")


def describe_error(path: Path, action: str, exc: sqlite3.Error) -> StoreError:
    """A :class:`StoreError` for a failed SQLite call that names the file and what to do."""
    text = str(exc)
    if "locked" in text or "busy" in text:
        hint = "another process kept the database busy; try again, or close other Vis processes"
    elif "malformed" in text or "not a database" in text:
        hint = "the file is damaged; restore a backup, or move it away and Vis creates a new one"
    elif "readonly" in text or "read-only" in text:
        hint = "the file or its folder is read-only; check the permissions"
    elif "full" in text:
        hint = "the disk is full; free some space and try again"
    else:
        hint = "see the SQLite message"
    return StoreError(f"cannot {action} in the Vis database {path}: {text} ({hint})")


def _apply_migrations(conn: sqlite3.Connection, path: Path, migrations: Migrations) -> None:
    """Bring a new or older Vis database up to ``len(migrations)`` in one transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if app_id == 0 and version == 0:
            count = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
            if count:
                raise StoreError(_foreign_message(path))
        elif app_id != APPLICATION_ID:
            raise StoreError(_foreign_message(path))
        for index in range(version, len(migrations)):
            for statement in migrations[index]:
                conn.execute(statement)
        if version < len(migrations):
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {len(migrations)}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _foreign_message(path: Path) -> str:
    return (
        f"{path} is an SQLite database of another program, not a Vis database "
        f"(it has no Vis marker). {_MOVE_AWAY}."
    )


def _verify(conn: sqlite3.Connection, path: Path, schema_version: int) -> None:
    """Read-only checks: the file is empty, or a Vis database this version can use. The
    three reads share one transaction: read apart, a Vis creating the database meanwhile
    (two starting at once) showed no marker yet but its tables, "another program's"."""
    conn.execute("BEGIN")
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        count = conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]
    finally:
        conn.execute("COMMIT")
    if app_id == APPLICATION_ID:
        if version > schema_version:
            raise StoreError(
                f"{path} was written by a newer Vis (schema version {version}; this Vis knows "
                f"up to {schema_version}). Upgrade Vis, or set VIS_HOME to another folder; "
                "the database was left unchanged."
            )
        return
    if app_id == 0 and version == 0 and count == 0:
        return
    raise StoreError(_foreign_message(path))


def connect(
    path: Path,
    busy_timeout: float,
    *,
    migrations: Migrations = MIGRATIONS,
    autocheckpoint_pages: int = WRITER_AUTOCHECKPOINT_PAGES,
) -> sqlite3.Connection:
    """Open ``path`` as a Vis database (created when missing) and bring it up to
    ``migrations``; raise :class:`StoreError`."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(f"cannot create the folder of the Vis database {path}: {exc}") from exc
    if not path.exists():  # created 0600 before SQLite opens it; -wal and -shm follow its mode
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError as exc:
            raise StoreError(f"cannot create the Vis database {path}: {exc}") from exc
    _check_header(path)
    try:
        conn = sqlite3.connect(
            path, timeout=busy_timeout, isolation_level=None, check_same_thread=False
        )
    except sqlite3.Error as exc:
        raise describe_error(path, "open", exc) from exc
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        _verify(conn, path, len(migrations))
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")  # in WAL: durable across process crashes
        # Checkpoints run on a thread of their own (see checkpoint.py); this one, inside a
        # commit, is the safety net. The log is truncated back to 64 MB at most after one.
        conn.execute(f"PRAGMA wal_autocheckpoint = {autocheckpoint_pages}")
        conn.execute("PRAGMA journal_size_limit = 67108864")
        conn.execute("PRAGMA foreign_keys = ON")
        _apply_migrations(conn, path, migrations)
    except StoreError:
        conn.close()
        raise
    except sqlite3.Error as exc:
        conn.close()
        raise describe_error(path, "open", exc) from exc
    return conn


class Database:
    """One connection shared by threads behind a lock; short read and write transactions."""

    def __init__(
        self,
        path: Path | str,
        *,
        busy_timeout: float = 10.0,
        migrations: Migrations = MIGRATIONS,
        checkpoint_every_rows: int = CHECKPOINT_EVERY_ROWS,
        autocheckpoint_pages: int = WRITER_AUTOCHECKPOINT_PAGES,
        exit_log_bytes: int = EXIT_LOG_BYTES,
    ) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = connect(
            self.path,
            busy_timeout,
            migrations=migrations,
            autocheckpoint_pages=autocheckpoint_pages,
        )
        self.checkpoint_every_rows = checkpoint_every_rows
        self.exit_log_bytes = exit_log_bytes
        self._checkpointer = Checkpointer(self.path, self._lock)
        self._checkpointed_at = self._conn.total_changes
        self._before_read: list[Callable[[], None]] = []

    def before_read(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Call ``hook`` before each read transaction (it commits what an event bus still
        holds, so the read sees it). Returns the function that removes it."""
        self._before_read.append(hook)

        def remove() -> None:
            if hook in self._before_read:
                self._before_read.remove(hook)

        return remove

    def _committed(self, conn: sqlite3.Connection) -> None:
        """After a commit: ask for a background checkpoint every so many written rows."""
        if conn.total_changes - self._checkpointed_at >= self.checkpoint_every_rows:
            self._checkpointed_at = conn.total_changes
            self._checkpointer.poke()

    def _connection(self) -> sqlite3.Connection:
        if self._conn is None:
            raise StoreError(f"the Vis database {self.path} is closed")
        return self._conn

    @contextmanager
    def write(self, action: str = "write") -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction, committed on exit and rolled back on error."""
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise describe_error(self.path, action, exc) from exc
            try:
                yield conn
                conn.execute("COMMIT")
                self._committed(conn)
            except sqlite3.Error as exc:
                self._rollback(conn)
                raise describe_error(self.path, action, exc) from exc
            except BaseException:
                self._rollback(conn)
                raise

    def call_write(self, action: str, fn: Callable[..., T], *args: Any) -> T:
        """``fn(conn, *args)`` in one ``BEGIN IMMEDIATE`` transaction, as :meth:`write`.

        The per-event path: the same transaction without a context manager's overhead.
        """
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise describe_error(self.path, action, exc) from exc
            try:
                result = fn(conn, *args)
                conn.execute("COMMIT")
                self._committed(conn)
            except sqlite3.Error as exc:
                self._rollback(conn)
                raise describe_error(self.path, action, exc) from exc
            except BaseException:
                self._rollback(conn)
                raise
            return result

    @contextmanager
    def read(self, action: str = "read") -> Iterator[sqlite3.Connection]:
        """A read transaction: every query inside sees one snapshot (and what the
        :meth:`before_read` hooks committed just before)."""
        for hook in tuple(self._before_read):  # before the lock: a hook writes
            hook()
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN")
                yield conn
            except sqlite3.Error as exc:
                raise describe_error(self.path, action, exc) from exc
            finally:
                self._rollback(conn)

    @staticmethod
    def _rollback(conn: sqlite3.Connection) -> None:
        if conn.in_transaction:
            conn.execute("ROLLBACK")

    def close(self, *, exiting: bool = False) -> None:
        """Close the connection. ``exiting``: the process ends next, without tearing down
        (``os._exit``): while the log is shorter than ``exit_log_bytes`` the connection is left
        open, so SQLite does not checkpoint it into the database on close (two disk syncs, and
        one more to start a new log at the next open). What was committed stays in the log, as
        durable as after any commit here, and the next open reads it, all of it: a longer log
        is checkpointed, so the runs that leave it do not make every later open slower."""
        self._checkpointer.stop()
        with self._lock:
            if self._conn is not None:
                if exiting and self._log_bytes() < self.exit_log_bytes:
                    _LEFT_OPEN.append(self._conn)
                else:
                    self._conn.close()
                self._conn = None

    def _log_bytes(self) -> int:
        try:
            return os.stat(f"{self.path}-wal").st_size
        except OSError:  # no log: nothing to copy
            return 0


_LEFT_OPEN: list[sqlite3.Connection] = []  # closed by the process's end (Database.close)
