"""Closing the host (Ctrl+Q) while a turn runs ends that turn as cancelled, in the store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import yaml

from vis_core.events import ActivityStarted, Event, TurnEnded
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus
from vis_core.paths import VisPaths
from vis_core.store import Store

HANGS = 'job = await shell("exec sleep 60")\nawait job.wait(600)'


async def test_closing_the_host_ends_the_running_turn_as_cancelled(
    workspace: Path, tmp_path: Path
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": HANGS}, {"text": "never"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    session = await host.new_session()
    started = asyncio.Event()
    ended: list[TurnEnded] = []

    def watch(event: Event) -> None:
        if isinstance(event, ActivityStarted) and event.activity.tool == "shell":
            started.set()
        if isinstance(event, TurnEnded):
            ended.append(event)

    session.subscribe(watch)
    turn = asyncio.ensure_future(session.submit("hang"))
    await started.wait()
    await host.close()  # what Ctrl+Q does
    await turn

    store = Store(VisPaths.from_env().db_file)
    try:
        [row] = store.turns(session.id)
        assert row.status == TurnStatus.CANCELLED
        stored = [e.event for e in store.events(session.id) if isinstance(e.event, TurnEnded)]
        assert [e.status for e in stored] == [TurnStatus.CANCELLED]
        assert [e.status for e in ended] == [TurnStatus.CANCELLED]  # and it was shown
    finally:
        store.close()


async def test_closing_while_the_cancelled_turn_is_ending_still_stores_its_end(
    workspace: Path, tmp_path: Path
) -> None:
    """Esc, then Ctrl+Q before the turn finished ending (the TUI cancels its turn worker on
    quit, then closes the host): the second cancel must not cut the ending short."""
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([{"code": HANGS}, {"text": "never"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    session = await host.new_session()
    started = asyncio.Event()

    def watch(event: Event) -> None:
        if isinstance(event, ActivityStarted) and event.activity.tool == "shell":
            started.set()

    session.subscribe(watch)
    turn = asyncio.ensure_future(session.submit("hang"))
    await started.wait()
    while not turn.done():  # Esc, and more cancels while the turn ends
        session.cancel()
        await asyncio.sleep(0)
    await host.close()

    store = Store(VisPaths.from_env().db_file)
    try:
        [row] = store.turns(session.id)
        assert row.status == TurnStatus.CANCELLED
    finally:
        store.close()
