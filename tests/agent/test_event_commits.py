"""A session commits each event before publishing it; an Activity's events may wait (up to
``HOLD``) to be committed in one transaction with later events, order kept; a read of the
store, from any thread, sees them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from store_locks import write_locked

from vis_core.agent.event_bus import MAX_HELD, EventBus
from vis_core.agent.session import AgentSession
from vis_core.events import ActivityEnded, ActivityStarted, Event, Notification
from vis_core.host import Host, HostOptions
from vis_core.model.activity import ActivityRecord, ActivityState, SymbolTag
from vis_core.store import Store, StoreError


@pytest.fixture
async def host(workspace: Path) -> AsyncIterator[Host]:
    opened = await Host.open(HostOptions(workspace=workspace))
    yield opened
    await opened.close()


def _record(session_id: str, ident: str, state: ActivityState) -> ActivityRecord:
    return ActivityRecord(
        id=ident,
        session_id=session_id,
        turn_id="t1",
        iteration_id="i1",
        tool="demo.build",
        tag=SymbolTag.MUTATION,
        state=state,
        presentation=None,
        owner="demo",
    )


class Published:
    """A subscriber that checks each event it gets is already in the store."""

    def __init__(self, host: Host, session: AgentSession) -> None:
        self.host, self.session = host, session
        self.events: list[Event] = []
        self.unsaved: list[Event] = []
        self.any = asyncio.Event()  # set with the first event
        session.subscribe(self)

    def __call__(self, event: Event) -> None:
        stored = [s.event for s in self.host.store.events(self.session.id)]
        if event not in stored:
            self.unsaved.append(event)
        self.events.append(event)
        self.any.set()


def _types(host: Host, session_id: str) -> list[str]:
    return [s.type for s in host.store.events(session_id)]


async def test_activities_and_the_next_event_are_committed_together_then_published_in_order(
    host: Host,
) -> None:
    session = await host.new_session()
    seen = Published(host, session)
    activities = []
    for ident in ("a1", "a2"):
        activities += [
            ActivityStarted(session.id, activity=_record(session.id, ident, ActivityState.RUNNING)),
            ActivityEnded(session.id, activity=_record(session.id, ident, ActivityState.SUCCEEDED)),
        ]
    for event in activities:
        await session.emit(event)
    assert seen.events == []  # neither shown nor saved yet
    note = Notification(session.id, text="block done")
    await session.emit(note)
    assert seen.events == [*activities, note] and seen.unsaved == []
    rows = [
        s
        for s in host.store.events(session.id)
        if s.type in {"ActivityStarted", "ActivityEnded", "Notification"}
    ]
    assert [r.type for r in rows] == ["ActivityStarted", "ActivityEnded"] * 2 + ["Notification"]
    assert len({r.created for r in rows}) == 1  # one transaction


async def test_a_read_of_the_store_sees_the_held_events_then_they_are_published(
    host: Host,
) -> None:
    session = await host.new_session()
    seen = Published(host, session)
    started = ActivityStarted(session.id, activity=_record(session.id, "a1", ActivityState.RUNNING))
    ended = ActivityEnded(session.id, activity=_record(session.id, "a1", ActivityState.SUCCEEDED))
    await session.emit(started)
    await session.emit(ended)
    # read on another thread, as an extension's SDK call or a tool reads the session
    stored = await asyncio.to_thread(host.store.events, session.id)
    assert [s.event for s in stored][-2:] == [started, ended]
    await asyncio.sleep(0)  # the loop publishes what the read committed, next
    assert seen.events == [started, ended] and seen.unsaved == []


async def test_many_activity_events_are_committed_without_waiting(host: Host) -> None:
    session = await host.new_session()
    seen = Published(host, session)
    events = [
        ActivityStarted(session.id, activity=_record(session.id, f"a{n}", ActivityState.RUNNING))
        for n in range(MAX_HELD)
    ]
    for event in events[:-1]:
        await session.emit(event)
    assert seen.events == []
    await session.emit(events[-1])  # the last one the bus holds: all are committed at once
    assert seen.events == events and seen.unsaved == []


async def test_held_events_past_one_commit_keep_their_order_with_emitted_ones(host: Host) -> None:
    """A direct call's events are held from the loop, never awaited: once the held events are
    as many as one commit takes, the next is submitted with them at once, so an event emitted
    after it (the next call's start, through the host) is stored after it. The bus refused
    it before, and the call emitted it from a task that a slow commit let the next start pass
    (test_direct_calls_are_stored_in_the_order_they_ended failed so under load)."""
    session = await host.new_session()
    seen = Published(host, session)
    held = [
        ActivityEnded(session.id, activity=_record(session.id, f"a{n}", ActivityState.SUCCEEDED))
        for n in range(MAX_HELD + 3)
    ]
    for event in held:
        session.events.hold(event)
    later = ActivityStarted(session.id, activity=_record(session.id, "b", ActivityState.RUNNING))
    await session.emit(later)
    stored = [s.event for s in host.store.events(session.id)]
    assert stored[-len(held) - 1 :] == [*held, later]
    for _ in range(500):  # published on the loop once committed
        if len(seen.events) > len(held):
            break
        await asyncio.sleep(0.01)
    assert seen.events == [*held, later] and seen.unsaved == []


async def test_any_later_event_commits_a_waiting_start_first(host: Host) -> None:
    session = await host.new_session()
    seen = Published(host, session)
    started = ActivityStarted(session.id, activity=_record(session.id, "a1", ActivityState.RUNNING))
    note = Notification(session.id, text="halfway")
    await session.emit(started)
    await session.emit(note)
    assert seen.events == [started, note] and seen.unsaved == []
    assert _types(host, session.id)[-2:] == ["ActivityStarted", "Notification"]


async def test_a_start_whose_call_runs_on_is_committed_and_shown_on_its_own(host: Host) -> None:
    session = await host.new_session()
    seen = Published(host, session)
    started = ActivityStarted(session.id, activity=_record(session.id, "a1", ActivityState.RUNNING))
    await session.emit(started)
    await seen.any.wait()  # the call is still running: its start is not held back for good
    assert seen.events == [started] and seen.unsaved == []
    assert _types(host, session.id)[-1] == "ActivityStarted"


async def test_an_ended_activity_is_committed_and_shown_after_its_wait(host: Host) -> None:
    session = await host.new_session()
    shown = asyncio.Event()
    ended = ActivityEnded(session.id, activity=_record(session.id, "a1", ActivityState.SUCCEEDED))
    session.subscribe(lambda event: shown.set() if event == ended else None)
    await session.emit(ended)
    await shown.wait()  # no later event: the wait ends it


async def test_early_subscribers_see_a_start_while_it_waits(host: Host) -> None:
    session = await host.new_session()
    early: list[Event] = []
    late: list[Event] = []
    session.subscribe(early.append, early=True)
    session.subscribe(late.append)
    started = ActivityStarted(session.id, activity=_record(session.id, "a1", ActivityState.RUNNING))
    await session.emit(started)
    assert early == [started]
    assert late == []  # not committed yet


async def test_closing_the_session_commits_a_waiting_start(host: Host) -> None:
    session = await host.new_session()
    started = ActivityStarted(session.id, activity=_record(session.id, "a1", ActivityState.RUNNING))
    await session.emit(started)
    await session.close()
    assert "ActivityStarted" in _types(host, session.id)


@contextmanager
def _bus(path: Path, busy_timeout: float = 10.0) -> Iterator[tuple[Store, EventBus, str]]:
    with Store(path, busy_timeout=busy_timeout) as store:
        yield store, EventBus(store), store.create_session(path.parent, path.parent).id


async def test_the_loop_serves_while_a_commit_waits_and_shows_the_event_after(
    tmp_path: Path,
) -> None:
    with _bus(tmp_path / "vis.db") as (store, bus, sid):
        seen: list[Event] = []
        bus.subscribe(seen.append)
        note = Notification(sid, text="saved, then shown")
        with write_locked(store.path):
            emitting = asyncio.ensure_future(bus.emit(note))
            served = 0
            for _ in range(50):  # the loop runs other work while the commit waits
                served += await asyncio.to_thread(lambda: 1)
            assert served == 50
            assert not emitting.done() and seen == []  # not saved yet: not shown
        await emitting
        assert seen == [note]
        assert [s.event for s in store.events(sid)] == [note]


async def test_a_failed_commit_is_the_emitters_error_and_shows_nothing(tmp_path: Path) -> None:
    with _bus(tmp_path / "vis.db", busy_timeout=0.05) as (store, bus, sid):
        seen: list[Event] = []
        bus.subscribe(seen.append)
        started = ActivityStarted(sid, activity=_record(sid, "a1", ActivityState.RUNNING))
        lost = Notification(sid, text="not saved")
        await bus.emit(started)  # held for the next commit
        with write_locked(store.path), pytest.raises(StoreError, match="locked"):
            await bus.emit(lost)
        assert seen == []
        after = Notification(sid, text="saved")
        await bus.emit(after)  # the held start is retried with it; the lost one stays lost
        assert seen == [started, after]
        assert [s.event for s in store.events(sid)] == [started, after]


async def test_concurrent_emitters_are_stored_and_shown_in_the_order_emitted(
    tmp_path: Path,
) -> None:
    with _bus(tmp_path / "vis.db") as (store, bus, sid):
        emitted: list[Event] = []
        seen: list[Event] = []
        bus.subscribe(emitted.append, early=True)
        bus.subscribe(seen.append)

        async def emitter(name: str) -> None:
            for n in range(40):
                if n % 3:
                    await bus.emit(Notification(sid, text=f"{name}.{n}"))
                else:
                    record = _record(sid, f"{name}.{n}", ActivityState.SUCCEEDED)
                    await bus.emit(ActivityEnded(sid, activity=record))

        with write_locked(store.path):  # the first commit waits: the others queue up
            tasks = [asyncio.ensure_future(emitter(f"e{k}")) for k in range(8)]
            for _ in range(20):
                await asyncio.sleep(0)
        await asyncio.gather(*tasks)
        await bus.close()
        assert len(emitted) == 8 * 40
        assert seen == emitted
        stored = store.events(sid)
        assert [s.event for s in stored] == emitted
        assert len({s.created for s in stored}) < len(stored)  # batched: fewer commits


async def test_a_subscriber_of_some_kinds_gets_only_those_in_order_with_the_others(
    tmp_path: Path,
) -> None:
    with _bus(tmp_path / "vis.db") as (_store, bus, sid):
        calls: list[tuple[str, Event]] = []
        bus.subscribe(lambda e: calls.append(("all", e)))
        bus.subscribe(lambda e: calls.append(("notes", e)), kinds=(Notification,))
        stop = bus.subscribe(lambda e: calls.append(("first", e)), first=True, kinds=(Event,))
        early: list[Event] = []
        bus.subscribe(early.append, early=True, kinds=(ActivityEnded,))
        started = ActivityStarted(sid, activity=_record(sid, "a1", ActivityState.RUNNING))
        ended = ActivityEnded(sid, activity=_record(sid, "a1", ActivityState.SUCCEEDED))
        note = Notification(sid, text="block done")
        for event in (started, ended, note):
            await bus.emit(event)
        assert early == [ended]
        assert calls == [
            ("first", started),
            ("all", started),
            ("first", ended),
            ("all", ended),
            ("first", note),
            ("all", note),
            ("notes", note),
        ]
        stop()
        calls.clear()
        later = Notification(sid, text="after")
        await bus.emit(later)
        assert calls == [("all", later), ("notes", later)]


async def test_commits_are_freed_without_the_cyclic_collector(host: Host) -> None:
    """A commit that was published leaves no reference cycle (its future's callback held it):
    a long session's commits are freed as they are shown, not when the collector runs."""
    import gc

    from vis_core.agent.event_bus import _Commit

    session = await host.new_session()
    seen = Published(host, session)
    gc.collect()
    gc.disable()
    try:
        for n in range(20):
            await session.emit(Notification(session.id, text=f"note {n}"))
        alive = sum(1 for o in gc.get_objects() if type(o) is _Commit)
    finally:
        gc.enable()
    assert len(seen.events) == 20 and not seen.unsaved
    assert alive == 0


async def test_a_raising_watcher_or_subscriber_is_logged_and_the_others_still_see_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(event: Event) -> None:
        raise RuntimeError("boom")

    with _bus(tmp_path / "vis.db") as (_store, bus, sid):
        early: list[Event] = []
        seen: list[Event] = []
        for early_one in (True, False):
            bus.subscribe(boom, early=early_one)
        bus.subscribe(early.append, early=True)
        bus.subscribe(seen.append)
        note = Notification(sid, text="still seen")
        await bus.emit(note)
        assert early == seen == [note]
    said = [r.getMessage() for r in caplog.records]
    assert f"event watcher {boom!r} failed on {note.type}" in said
    assert f"event subscriber {boom!r} failed on {note.type}" in said
