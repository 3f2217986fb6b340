"""A session commits each event before publishing it; an Activity's events may wait (up to
``HOLD``) to be committed in one transaction with later events, order kept; a read of the
store, from any thread, sees them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from vis_core.agent.event_bus import MAX_HELD
from vis_core.agent.session import AgentSession
from vis_core.events import ActivityEnded, ActivityStarted, Event, Notification
from vis_core.host import Host, HostOptions
from vis_core.model.activity import ActivityRecord, ActivityState, SymbolTag


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
        session.subscribe(self)

    def __call__(self, event: Event) -> None:
        stored = [s.event for s in self.host.store.events(self.session.id)]
        if event not in stored:
            self.unsaved.append(event)
        self.events.append(event)


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
    for _ in range(500):  # the call is still running: its start is not held back for good
        if seen.events:
            break
        await asyncio.sleep(0.01)
    assert seen.events == [started] and seen.unsaved == []
    assert _types(host, session.id)[-1] == "ActivityStarted"


async def test_an_ended_activity_is_committed_and_shown_after_its_wait(host: Host) -> None:
    session = await host.new_session()
    shown = asyncio.Event()
    ended = ActivityEnded(session.id, activity=_record(session.id, "a1", ActivityState.SUCCEEDED))
    session.subscribe(lambda event: shown.set() if event == ended else None)
    await session.emit(ended)
    await asyncio.wait_for(shown.wait(), 5)  # no later event: the wait ends it


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
