"""Background WAL checkpoints, so copying the log into the database never stalls a commit."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# Rows written between two background checkpoints (about 2,000 WAL pages, 8 MB).
CHECKPOINT_EVERY_ROWS = 4000
# The writer's own automatic checkpoint stays on as a safety net, well above that.
WRITER_AUTOCHECKPOINT_PAGES = 16000
# Passes beside the writer before the short one under its lock; fewer when the writer has
# added less than SMALL_TAIL_FRAMES pages during the last pass.
UNLOCKED_PASSES = 4
SMALL_TAIL_FRAMES = 256
# A checkpoint thread with nothing to do for this long closes its connection and ends.
IDLE_SECONDS = 30.0
# A process that ends without closing the database (``vis run``) leaves its log to the next,
# which reads all of it to open the database; past this size it closes, copying the log in.
EXIT_LOG_BYTES = 4 * 1024 * 1024


class Checkpointer:
    """Copies the WAL into the database on a thread and connection of its own.

    SQLite's automatic checkpoint runs inside the commit that crosses the threshold; with
    one commit per event that stalled an append for ~15 ms every few hundred events. Here
    the bulk of the copy runs beside the writer; a second, short pass holds the store's
    lock so the log is copied to its end and the next commit restarts it from the start
    (a log that never catches up grows without bound). Durability is unchanged: the
    checkpoint syncs the WAL before copying and the database after, as ``synchronous =
    NORMAL`` does in the writer.
    """

    def __init__(self, path: Path, write_lock: Any) -> None:
        self._path = path
        self._write_lock = write_lock
        self._wake = threading.Event()
        self._guard = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = False

    def poke(self) -> None:
        """Ask for a checkpoint soon; starts the thread when it is not running."""
        with self._guard:
            if self._stopping:
                return
            self._wake.set()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name=f"vis-checkpoint {self._path}", daemon=True
                )
                self._thread.start()

    def stop(self) -> None:
        """End the thread (after a checkpoint in progress) and close its connection."""
        with self._guard:
            self._stopping = True
            thread = self._thread
            self._wake.set()
        if thread is not None and thread is not threading.current_thread():
            thread.join()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error:
            log.exception("cannot open %s for background checkpoints", self._path)
            with self._guard:
                self._thread = None
            return
        try:
            conn.execute("PRAGMA synchronous = NORMAL")
            while True:
                if not self._wake.wait(IDLE_SECONDS):
                    with self._guard:
                        if not self._wake.is_set():
                            self._thread = None  # idle: the next poke starts a new one
                            return
                self._wake.clear()
                if self._stopping:
                    return
                self.checkpoint(conn)
        except sqlite3.Error:
            log.exception("background checkpoint of %s failed", self._path)
            with self._guard:
                self._thread = None
        finally:
            conn.close()

    def checkpoint(self, conn: sqlite3.Connection) -> None:
        """One round: copy beside the writer, then catch up to the end under its lock.

        Each pass beside the writer leaves what was written while it ran, a shorter stretch
        every time; the pass under the lock copies only the last few frames.
        """
        logged = -1
        for _ in range(UNLOCKED_PASSES):
            _, frames, _ = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if 0 <= frames - logged < SMALL_TAIL_FRAMES:
                break
            logged = frames
        with self._write_lock:
            conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
