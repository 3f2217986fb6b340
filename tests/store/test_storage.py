"""How the store lays events down: migrations, runs of the log, and background WAL checkpoints."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from vis_core.events import ActivityEnded, ActivityStarted, Notification, event_payload
from vis_core.model.activity import ActivityState
from vis_core.store import Store
from vis_core.store.schema import APPLICATION_ID, MIGRATIONS

from .conftest import make_record, session_activities


def _schema_1_database(path: Path) -> tuple[str, list]:
    """A database as schema 1 wrote it: activity rows hold a copy of their latest event."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 1")
    sid = "s1"
    conn.execute(
        "INSERT INTO sessions (id, workspace, project_root, created, modified) "
        "VALUES (?, '/w', '/w', 1, 1)",
        (sid,),
    )
    started = make_record(sid, "t1", activity_id="a1")
    ended = make_record(sid, "t1", activity_id="a1", state=ActivityState.SUCCEEDED)
    other = make_record(sid, "t1", activity_id="a2")
    latest: dict[str, tuple[int, str]] = {}
    for event in (
        ActivityStarted(sid, activity=started),
        ActivityStarted(sid, activity=other),
        Notification(sid, text="between"),
        ActivityEnded(sid, activity=ended),
    ):
        _, payload = event_payload(event)
        seq = conn.execute(
            "INSERT INTO events (session_id, type, data, created) VALUES (?, ?, ?, 1)",
            (sid, event.type, payload),
        ).lastrowid
        if isinstance(event, ActivityStarted | ActivityEnded) and event.activity is not None:
            pos = latest.get(event.activity.id, (seq, ""))[0]
            latest[event.activity.id] = (pos, payload)
    for activity_id, (pos, payload) in latest.items():
        conn.execute(
            "INSERT INTO activities (id, pos, session_id, turn_id, tool, tag, state, record) "
            "VALUES (?, ?, ?, 't1', 'cat', 'observation', 'x', ?)",
            (activity_id, pos, sid, payload),
        )
    conn.close()
    return sid, [ended, other]


def test_schema_1_activities_survive_the_migration(db_path: Path) -> None:
    sid, expected = _schema_1_database(db_path)
    with Store(db_path) as store:
        assert store.activities("t1") == expected
        assert session_activities(store, sid) == expected
        later = make_record(sid, "t1", activity_id="a2", state=ActivityState.FAILED)
        store.append(ActivityEnded(sid, activity=later))
        assert store.activities("t1") == [expected[0], later]


def test_a_later_event_of_an_activity_is_read_back_from_the_log(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    record = make_record(sid, "t", activity_id="a")
    store.append(ActivityStarted(sid, activity=record))
    ended = make_record(sid, "t", activity_id="a", state=ActivityState.SUCCEEDED)
    seq = store.append(ActivityEnded(sid, activity=ended))
    assert store.activities("t") == [ended]
    assert store.events(sid, after_seq=seq - 1)[0].type == "ActivityEnded"


def test_an_activity_outside_a_turn_keeps_one_row(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    store.append(ActivityStarted(sid, activity=make_record(sid, None, activity_id="a")))
    store.append(ActivityStarted(sid, activity=make_record(sid, "t", activity_id="b")))
    ended = make_record(sid, None, activity_id="a", state=ActivityState.SUCCEEDED)
    store.append(ActivityEnded(sid, activity=ended))
    activities = session_activities(store, sid)
    assert [record.id for record in activities] == ["a", "b"]
    assert activities[0] == ended
    assert [record.id for record in store.activities("t")] == ["b"]


def test_activities_have_one_index(store: Store) -> None:
    with sqlite3.connect(store.path) as conn:
        indexes = conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'activities'"
        ).fetchone()[0]
    assert indexes == 1  # (turn_id, id): a new activity writes one index page


def _wal_frames(path: Path) -> int:
    wal = path.with_name(path.name + "-wal")
    return max(0, (wal.stat().st_size - 32) // (24 + 4096)) if wal.exists() else 0


def _checkpoint_threads(path: Path) -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == f"vis-checkpoint {path}"]


def test_checkpoints_run_beside_the_writer_and_keep_the_log_short(db_path: Path) -> None:
    # The writer's own automatic checkpoint off: only the background one can copy the log.
    with Store(db_path, checkpoint_every_rows=100, autocheckpoint_pages=0) as store:
        sid = store.create_session("/w", "/w").id
        written = 0
        for n in range(1500):
            store.append(ActivityStarted(sid, activity=make_record(sid, "t", activity_id=str(n))))
            written += 1
            if n % 100 == 99:
                time.sleep(0.02)  # let the checkpoint thread finish its round
        assert _checkpoint_threads(db_path)
        # 1,500 commits of 4+ pages each would be over 6,000 frames without checkpoints.
        assert _wal_frames(db_path) < 2000
        assert len(store.activities("t")) == written
    assert not _checkpoint_threads(db_path)
    with Store(db_path) as again:
        assert len(again.activities("t")) == written


def test_a_store_that_writes_little_starts_no_checkpoint_thread(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    store.append(Notification(sid, text="hello"))
    assert not _checkpoint_threads(store.path)


def _seqs(store: Store, session_id: str, **kwargs: int) -> list[int]:
    return [event.seq for event in store.events(session_id, **kwargs)]


def test_the_log_has_no_index_and_each_session_reads_its_runs(db_path: Path) -> None:
    with Store(db_path) as store, Store(db_path) as other:  # two writers on one file
        a = store.create_session("/w", "/w").id
        b = store.create_session("/w", "/w").id
        written: dict[str, list[int]] = {a: [], b: []}
        for writer, sid in [
            (store, a),
            (store, a),
            (other, b),
            (store, a),
            (other, a),
            (other, b),
            (other, b),
            (store, a),
            (store, b),
        ]:
            written[sid].append(writer.append(Notification(sid, text="x")))
        assert _seqs(store, a) == written[a] and _seqs(other, b) == written[b]
        assert _seqs(store, a, after_seq=written[a][1], limit=2) == written[a][2:4]
        assert _seqs(store, b, after_seq=written[b][-1]) == []
        with sqlite3.connect(db_path) as conn:
            runs = conn.execute("SELECT start, session_id FROM event_runs ORDER BY start")
            assert [sid for _, sid in runs] == [a, b, a, b, a, b]  # one row per switch
            indexes = conn.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'"
            ).fetchone()[0]
        assert indexes == 0  # appending writes the log's pages only
        assert store.delete_session(a)
        assert _seqs(store, a) == [] and _seqs(store, b) == written[b]
        later = store.append(Notification(b, text="after"))
        assert _seqs(other, b) == [*written[b], later]


def test_a_batch_logs_its_seqs_and_runs_as_appending_one_by_one_does(db_path: Path) -> None:
    """append_many writes a batch's rows in one statement: each event gets the seq it
    returns, and a run starts where the session changes, within the batch and at its first
    event after another writer's rows or this writer's own."""
    with Store(db_path) as store, Store(db_path) as other:
        a = store.create_session("/w", "/w").id
        b = store.create_session("/w", "/w").id
        written: dict[str, list[int]] = {a: [], b: []}
        for writer, batch in [
            (store, [a, a, b, a]),
            (store, [a, b]),  # its first row continues the run of the batch before: b
            (other, [b, b]),  # the row before is this file's, not this writer's
            (store, [a]),
            (store, [a, a]),  # the same session just after itself: no new run
        ]:
            seqs = writer.append_many(Notification(sid, text="x") for sid in batch)
            for sid, seq in zip(batch, seqs, strict=True):
                written[sid].append(seq)
        every = sorted(written[a] + written[b])
        assert every == list(range(every[0], every[0] + len(every)))
        assert _seqs(store, a) == written[a] and _seqs(other, b) == written[b]
        with sqlite3.connect(db_path) as conn:
            runs = [sid for _, sid in conn.execute("SELECT * FROM event_runs ORDER BY start")]
        assert runs == [a, b, a, b, a]


def test_schema_4_logs_gain_their_runs(db_path: Path) -> None:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db_path, isolation_level=None)
    for migration in MIGRATIONS[:4]:
        for statement in migration:
            conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("PRAGMA user_version = 4")
    for sid in ("s1", "s2"):
        conn.execute(
            "INSERT INTO sessions (id, workspace, project_root, created, modified) "
            "VALUES (?, '/w', '/w', 1, 1)",
            (sid,),
        )
    order = ["s1", "s1", "s2", "s1", "s2", "s2"]
    for sid in order:
        _, payload = event_payload(Notification(sid, text="x"))
        conn.execute(
            "INSERT INTO events (session_id, type, data, created) VALUES (?, 'Notification', ?, 1)",
            (sid, payload),
        )
    conn.close()
    with Store(db_path) as store:
        assert _seqs(store, "s1") == [1, 2, 4] and _seqs(store, "s2") == [3, 5, 6]
        assert store.append(Notification("s2", text="y")) == 7
        assert store.append(Notification("s1", text="z")) == 8
        assert _seqs(store, "s1") == [1, 2, 4, 8] and _seqs(store, "s2") == [3, 5, 6, 7]
