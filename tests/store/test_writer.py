"""The store's writer thread: queued events are committed in order, batched when they queue
up, a failed commit reaches the submitter, and closing the store commits what is queued."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from store_locks import write_locked

from vis_core.events import Notification, TurnEnded, TurnStarted
from vis_core.extension_host.session_changes import fork_stored
from vis_core.model.turn import TurnStatus
from vis_core.store import Store, StoreError


def test_queued_events_are_committed_in_order_in_few_transactions(store: Store) -> None:
    sid = store.create_session("/w", "/w").id
    notes = [[Notification(sid, text=f"{n}.{k}") for k in range(3)] for n in range(200)]
    with write_locked(store.path):  # the writer waits: everything after its first batch queues
        futures = [store.submit(batch) for batch in notes]
        assert not any(future.done() for future in futures)
    seqs = [seq for future in futures for seq in future.result(timeout=60)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    stored = store.events(sid)
    assert [s.seq for s in stored] == seqs
    assert [s.event for s in stored] == [note for batch in notes for note in batch]
    assert len({s.created for s in stored}) <= 2  # the batch it was waiting on, then the rest


def test_a_failed_commit_reaches_the_submitter_and_the_writer_goes_on(db_path: Path) -> None:
    with Store(db_path, busy_timeout=0.05) as store:
        sid = store.create_session("/w", "/w").id
        lost, kept = Notification(sid, text="not saved"), Notification(sid, text="saved")
        with write_locked(db_path):
            failed = store.submit([lost])
            with pytest.raises(StoreError, match="locked"):
                failed.result(timeout=60)
        assert store.submit([kept]).result(timeout=60)
        assert [s.event for s in store.events(sid)] == [kept]


def test_closing_the_store_commits_what_is_queued(db_path: Path) -> None:
    store = Store(db_path)
    sid = store.create_session("/w", "/w").id
    notes = [Notification(sid, text=str(n)) for n in range(300)]
    with write_locked(db_path):
        futures = [store.submit([note]) for note in notes]
    store.close()
    assert all(future.done() for future in futures)
    with pytest.raises(StoreError, match="closed"):
        store.submit([Notification(sid, text="after")]).result(timeout=60)
    with Store(db_path) as reopened:
        assert [s.event for s in reopened.events(sid)] == notes


def test_a_synchronous_append_needs_no_writer_thread(store: Store) -> None:
    """CLI subcommands (replay, export, `vis sessions`) write without an event loop."""
    sid = store.create_session("/w", "/w").id
    note = Notification(sid, text="from the command line")
    seq = store.append(note)
    assert [(s.seq, s.event) for s in store.events(sid)] == [(seq, note)]
    assert not store.writer.started


async def test_writes_on_the_loop_wait_for_no_commit_and_reads_see_them(store: Store) -> None:
    """A title, a state value, a settings override, a prompt and a fork made on the event loop
    are committed by the writer thread, after the events queued before them; a read waits
    for them."""
    sid = store.create_session("/w", "/w").id
    turned = store.create_session("/w", "/w").id
    store.append_many(
        [
            TurnStarted(turned, turn_id="t", position=1, request="hi"),
            TurnEnded(turned, turn_id="t", status=TurnStatus.COMPLETED),
        ]
    )
    note = Notification(sid, text="before the title")
    with write_locked(store.path):  # a commit on the loop would wait here (busy timeout)
        queued = store.submit([note])
        store.set_title(sid, "Renamed")
        store.state_set("ext", "k", {"v": 1})
        store.set_override("session", sid, "model", "scripted")
        assert store.add_prompt(sid, "fix the tests") is None  # saved later, by the writer
        forked = fork_stored(store, turned, None, "test")
        assert not queued.done() and not forked.done()  # nothing committed: the loop did not wait
    assert store.get_session(sid).title == "Renamed"  # type: ignore[union-attr]
    assert store.state_get("ext", "k") == {"v": 1}
    assert store.list_overrides("session", sid) == {"model": "scripted"}
    assert [s.event for s in store.events(sid)] == [note]
    assert [p.text for p in store.prompts(sid)] == ["fix the tests"]
    fork = await asyncio.wrap_future(forked)
    assert fork.forked_from == turned and fork.turn_count == 1
