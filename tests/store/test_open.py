"""Opening the database: creation, version marks, and refusing files that are not Vis's."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from vis_core.store import Store, StoreError
from vis_core.store.schema import APPLICATION_ID, MIGRATIONS, SCHEMA_VERSION


def test_new_database_is_created_in_wal_with_the_vis_marks(db_path: Path) -> None:
    with Store(db_path) as store:
        session = store.create_session("/w", "/w", title="first")
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    with Store(db_path) as reopened:
        assert reopened.get_session(session.id) == session


def test_default_path_is_under_vis_home(vis_home: Path) -> None:
    with Store() as store:
        assert store.path == vis_home / "vis.db"
    assert (vis_home / "vis.db").is_file()


def _assert_refused(path: Path, *words: str) -> None:
    before = path.read_bytes()
    with pytest.raises(StoreError) as caught:
        Store(path)
    message = str(caught.value)
    assert str(path) in message
    for word in words:
        assert word in message
    assert path.read_bytes() == before


def test_text_file_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "vis.db"
    path.write_text("my notes, not a database\n" * 20)
    _assert_refused(path, "not a Vis database", "VIS_HOME")


def test_sqlite_database_of_another_program_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vis.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    conn.execute("INSERT INTO invoices (total) VALUES (12.5)")
    conn.commit()
    conn.close()
    _assert_refused(path, "another program", "Move or rename")
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT total FROM invoices").fetchall() == [(12.5,)]
    assert conn.execute("PRAGMA application_id").fetchone()[0] == 0
    conn.close()


def test_database_with_another_application_id_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vis.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA application_id = 1234")
    conn.commit()
    conn.close()
    _assert_refused(path, "another program")


def test_corrupt_database_is_refused_and_left_unchanged(db_path: Path) -> None:
    with Store(db_path) as store:
        store.create_session("/w", "/w")
    data = bytearray(db_path.read_bytes())
    data[100:] = b"\xff" * (len(data) - 100)  # keep the header, ruin every page
    db_path.write_bytes(bytes(data))
    for suffix in ("-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    before = db_path.read_bytes()
    with pytest.raises(StoreError) as caught:
        Store(db_path).list_sessions()
    assert str(db_path) in str(caught.value)
    assert "damaged" in str(caught.value)
    assert db_path.read_bytes() == before


def test_newer_schema_version_is_refused(db_path: Path) -> None:
    Store(db_path).close()
    conn = sqlite3.connect(db_path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.commit()
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.close()
    before = db_path.read_bytes()
    with pytest.raises(StoreError) as caught:
        Store(db_path)
    assert "newer Vis" in str(caught.value)
    assert str(db_path) in str(caught.value)
    assert db_path.read_bytes() == before


def test_folder_in_place_of_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vis.db"
    path.mkdir()
    with pytest.raises(StoreError, match="is a folder"):
        Store(path)


def test_empty_file_becomes_a_new_database(tmp_path: Path) -> None:
    path = tmp_path / "vis.db"
    path.touch()
    with Store(path) as store:
        assert store.list_sessions() == []


def test_closed_store_says_so(db_path: Path) -> None:
    store = Store(db_path)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.list_sessions()


@pytest.mark.parametrize("exit_log_bytes", [1 << 30, 0])
def test_an_exiting_store_leaves_only_a_short_log(db_path: Path, exit_log_bytes: int) -> None:
    # ``vis run`` ends with os._exit: a short log is left for the next open to read; a longer
    # one is copied into the database, so the log the next start reads stays short
    store = Store(db_path, exit_log_bytes=exit_log_bytes)
    session = store.create_session("/w", "/w", title="kept")
    store.close(exiting=True)
    log = Path(f"{db_path}-wal")
    assert (log.exists() and log.stat().st_size > 0) is (exit_log_bytes > 0)
    with Store(db_path) as reopened:
        assert reopened.get_session(session.id) == session


def test_older_vis_database_is_migrated_in_place(db_path: Path) -> None:
    with Store(db_path) as store:
        session = store.create_session("/w", "/w", title="kept")
    upgrade = ("CREATE TABLE later_feature (id INTEGER PRIMARY KEY)",)
    later = (*MIGRATIONS, upgrade)  # what a later Vis knows
    with Store(db_path, migrations=later) as store:
        assert store.get_session(session.id) == session
    conn = sqlite3.connect(db_path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1
    assert conn.execute("SELECT count(*) FROM later_feature").fetchone()[0] == 0
    conn.close()
    with Store(db_path, migrations=later) as store:  # already current: nothing runs twice
        assert store.get_session(session.id) == session


class _CommitsAfterTheFirstRead:
    """A connection that lets ``other`` commit right after its first statement: the moment
    a second Vis, creating the database, finishes while this one looks at it."""

    def __init__(self, conn: sqlite3.Connection, other: sqlite3.Connection) -> None:
        self.conn, self.other, self.reads = conn, other, 0

    def execute(self, sql: str) -> sqlite3.Cursor:
        cursor = self.conn.execute(sql)
        if sql.startswith(("PRAGMA", "SELECT")):
            self.reads += 1
            if self.reads == 1:
                self.other.execute("COMMIT")
        return cursor


def test_a_database_another_vis_creates_meanwhile_is_not_another_programs(db_path: Path) -> None:
    """Two Vis starting at once on a new install: one read the marker (none yet), the other
    then committed its tables, and the first read those and refused the file as "an SQLite
    database of another program" (seen in a full run). Its three reads now see one moment."""
    from vis_core.store.database import _verify

    db_path.parent.mkdir(parents=True, exist_ok=True)
    creating = sqlite3.connect(db_path, isolation_level=None)
    creating.execute("PRAGMA journal_mode = WAL")
    creating.execute("BEGIN IMMEDIATE")
    for statement in (s for migration in MIGRATIONS for s in migration):
        creating.execute(statement)
    creating.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    creating.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    looking = sqlite3.connect(db_path, isolation_level=None)
    try:
        _verify(_CommitsAfterTheFirstRead(looking, creating), db_path, SCHEMA_VERSION)  # type: ignore[arg-type]
    finally:
        looking.close()
        creating.close()
    with Store(db_path) as store:  # and the database the other made opens
        assert store.create_session("/w", "/w").id
