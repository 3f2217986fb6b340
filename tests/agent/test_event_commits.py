"""A session commits each event before publishing it; an Activity's start may wait (up to
``HOLD_START``) to be committed in one transaction with the next event, order kept."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

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


async def test_a_start_and_its_end_are_committed_together_then_published_in_order(
    host: Host,
) -> None:
    session = await host.new_session()
    seen = Published(host, session)
    started = ActivityStarted(session.id, activity=_record(session.id, "a1", ActivityState.RUNNING))
    ended = ActivityEnded(session.id, activity=_record(session.id, "a1", ActivityState.SUCCEEDED))
    await session.emit(started)
    assert seen.events == []  # neither shown nor saved yet
    await session.emit(ended)
    assert seen.events == [started, ended] and seen.unsaved == []
    rows = [s for s in host.store.events(session.id) if s.type.startswith("Activity")]
    assert [r.type for r in rows] == ["ActivityStarted", "ActivityEnded"]
    assert rows[0].created == rows[1].created  # one transaction


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


async def test_early_subscribers_see_a_start_while_it_waits(host: Host) -> None:
    session = await host.new_session()
    early: list[Event] = []
    session.subscribe(early.append, early=True)
    started = ActivityStarted(session.id, activity=_record(session.id, "a1", ActivityState.RUNNING))
    await session.emit(started)
    assert early == [started]
    assert "ActivityStarted" not in _types(host, session.id)


async def test_closing_the_session_commits_a_waiting_start(host: Host) -> None:
    session = await host.new_session()
    started = ActivityStarted(session.id, activity=_record(session.id, "a1", ActivityState.RUNNING))
    await session.emit(started)
    await session.close()
    assert "ActivityStarted" in _types(host, session.id)
