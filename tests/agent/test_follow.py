"""A front end that follows a session during its turn gets each event once: the running
turn's events as a read of the store has them, then those published after that read."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from vis_core.events import (
    ActivityStarted,
    AssistantDelta,
    Event,
    TurnEnded,
    TurnStarted,
    UsageReported,
)
from vis_core.frontend import Frontend
from vis_core.host import Host, HostOptions
from vis_core.model.activity import ActivityRecord, ActivityState, SymbolTag


@pytest.fixture
async def host(workspace: Path) -> AsyncIterator[Host]:
    opened = await Host.open(HostOptions(workspace=workspace))
    yield opened
    await opened.close()


def _started(session_id: str, ident: str) -> ActivityStarted:
    record = ActivityRecord(
        id=ident,
        session_id=session_id,
        turn_id="t2",
        iteration_id="i1",
        tool="demo.build",
        tag=SymbolTag.MUTATION,
        state=ActivityState.RUNNING,
        presentation=None,
        owner="demo",
    )
    return ActivityStarted(session_id, activity=record)


async def test_events_around_the_read_come_once_from_the_store_or_live(host: Host) -> None:
    session = await host.new_session()
    sid = session.id
    for event in (
        TurnStarted(sid, turn_id="t1", position=1, request="first"),
        TurnEnded(sid, turn_id="t1"),
        TurnStarted(sid, turn_id="t2", position=2, request="second"),
        AssistantDelta(sid, turn_id="t2", text="a"),
    ):
        await session.emit(event)
    got: list[Event] = []
    follow = Frontend(host).follow(session, got.append)
    usage = UsageReported(sid, turn_id="t2")  # counted by the session: passed on, not read
    await session.emit(usage)
    held = _started(sid, "before")  # held for a later commit: published after the read
    session.events.hold(held)
    read = await asyncio.to_thread(follow.read)  # commits the held one: the read sees it
    after = AssistantDelta(sid, turn_id="t2", text="b")
    await session.emit(after)  # published before the start: held until then
    assert got == []
    follow.start()
    last = TurnEnded(sid, turn_id="t2")
    await session.emit(last)
    follow.close()
    await session.emit(AssistantDelta(sid, turn_id="t2", text="after the close"))

    assert read == [
        TurnStarted(sid, turn_id="t2", position=2, request="second"),
        AssistantDelta(sid, turn_id="t2", text="a"),
        held,
    ]
    assert got == [usage, after, last]
    assert follow.ended == {"t1"}
