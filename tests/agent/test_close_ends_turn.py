"""Closing the host (Ctrl+Q) while a turn runs ends that turn as cancelled, in the store."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from vis_core.agent.session import AgentSession
from vis_core.events import ActivityStarted, Event, TurnEnded
from vis_core.host import Host, HostOptions
from vis_core.model.turn import TurnStatus
from vis_core.paths import VisPaths
from vis_core.store import Store

CANCELLED = "cancelled by the user"
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


def _after_loop_turns(turns: int, action: Callable[[], object]) -> None:
    """Run ``action`` once the event loop went round ``turns`` more times."""
    if turns == 0:
        action()
    else:
        asyncio.get_running_loop().call_soon(_after_loop_turns, turns - 1, action)


def _cancel_twice(
    first: str, later: int, task: Callable[[], asyncio.Future[TurnEnded] | None]
) -> Callable[[Event], None]:
    """A subscriber that cancels ``task()`` at the first event of type ``first`` (the screen
    unmounts), then again ``later`` loop turns after (the app shuts down)."""
    done: list[Event] = []

    def watch(event: Event) -> None:
        target = task()
        if event.type == first and not done and target is not None:
            done.append(event)
            target.cancel()
            _after_loop_turns(later, target.cancel)

    return watch


def _cancelled(
    target: str, session: AgentSession, caller: asyncio.Future[TurnEnded]
) -> Callable[[], asyncio.Future[TurnEnded] | None]:
    """The task a test cancels: the caller of ``submit`` or the turn's own task."""
    if target == "caller":
        return lambda: caller
    return lambda: session._task


@pytest.mark.parametrize(
    ("target", "first"),
    [("caller", "TurnStarted"), ("caller", "BlockFinished"), ("turn", "BlockFinished")],
)
async def test_a_turn_cancelled_twice_anywhere_still_stores_its_end(
    workspace: Path, tmp_path: Path, target: str, first: str
) -> None:
    """Ctrl+Q as a block finishes: Textual cancels the screen's turn worker (the caller of
    ``submit``) when the screen unmounts and again when the app shuts down, then the app
    closes the host. Whatever point of the turn the second cancel lands on (the block
    finishing, the next request starting, the turn ending), and whether it reaches the caller
    or the turn's task itself (as anything awaiting that task passes it on), the turn ends
    ``cancelled`` in the store with its TurnEnded event, and a resumed session shows that end."""
    script = tmp_path / "script.yaml"
    code = "print('done')"
    script.write_text(yaml.safe_dump([{"code": code}, {"text": "the end"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    ids: list[str] = []
    try:
        for later in range(7):  # the second cancel, this many loop turns after the first
            session = await host.new_session()
            ids.append(session.id)
            caller = asyncio.ensure_future(session.submit("go"))  # the TUI's turn worker
            cancelled = _cancelled(target, session, caller)
            session.subscribe(_cancel_twice(first, later, cancelled))
            with contextlib.suppress(asyncio.CancelledError):
                await caller
            await session.close()  # what host.close does with each session
    finally:
        await host.close()

    stored = []  # per session: the turn's row status, its TurnEnded events
    with Store(VisPaths.from_env().db_file) as store:
        for session_id in ids:
            [row] = store.turns(session_id)
            ends = [e.event for e in store.events(session_id) if isinstance(e.event, TurnEnded)]
            stored.append((row.status, [(e.status, e.error) for e in ends]))
    assert stored == [(TurnStatus.CANCELLED, [(TurnStatus.CANCELLED, CANCELLED)])] * len(ids)

    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        for session_id in ids:
            resumed = await host.open_session(session_id)
            ends = [
                e.event for e in host.store.events(session_id) if isinstance(e.event, TurnEnded)
            ]
            assert [e.error for e in ends] == [CANCELLED]  # not ended again as interrupted
            assert not resumed.running
    finally:
        await host.close()
