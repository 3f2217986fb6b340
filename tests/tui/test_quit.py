"""Quitting (Ctrl+Q) while a turn's last events are still on their way to the screen."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from pilot_keys import type_keys
from sample_turns import record

from vis_core.events import ActivityStarted, BlockFinished, Event, LiveOpened, TurnEnded
from vis_core.extension import live_nodes as N
from vis_core.extension.live_nodes import to_plain
from vis_core.model.activity import ActivityPresentation
from vis_core.store import Store

from .support import started, until, vis_app, write_script


@pytest.mark.parametrize("last", [BlockFinished, TurnEnded])
async def test_quitting_as_the_turn_ends_drops_its_late_events(
    workspace: Path, tmp_path: Path, last: type[Event]
) -> None:
    """The person quits just as the block's note (BlockFinished) or the turn's footer
    (TurnEnded) is posted to the screen: the screen must not mount them into a closing app
    (Textual's MountError), and the queued message is not sent."""
    script = write_script(tmp_path, [{"code": "import asyncio\nawait asyncio.sleep(0.3)\n1/0"}])
    app = vis_app(workspace, script)
    quitting = asyncio.Event()
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        session_id = app.session.id

        def quit_on(event: Event) -> None:  # after the screen's subscriber posted the event
            if isinstance(event, last) and not quitting.is_set():
                quitting.set()
                app.exit(0)  # what Ctrl+Q does (App.action_quit)

        app.session.subscribe(quit_on)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: app.main.turn_running)
        await type_keys(pilot, *"next", "enter")  # queued behind the running turn
        await asyncio.wait_for(quitting.wait(), 20)
    assert app.return_code == 0  # a MountError in a handler would have ended the app with 1
    assert app._exception is None
    assert app.main.queue == ["next"]
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        turns = store.turns(session_id)
    assert [t.request for t in turns] == ["go"]  # the queued message was not sent


def _row_event(session_id: str, turn_id: str) -> Event:
    shown = ActivityPresentation("List files", ". · 2 files")
    return ActivityStarted(
        session_id, activity=record("late", shown, session_id=session_id, turn_id=turn_id)
    )


def _live_event(session_id: str, turn_id: str) -> Event:
    nodes = (N.output("log", "Log", default_expanded=True),)
    return LiveOpened(session_id, view_id="v1", title="CI", owner="ci", nodes=to_plain(nodes))


@pytest.mark.parametrize("shown", [_row_event, _live_event])
async def test_quitting_as_a_row_is_being_mounted(
    workspace: Path, tmp_path: Path, shown: Callable[[str, str], Event]
) -> None:
    """The screen mounted an Activity row (or a live view) and the person quit before it
    composed: Textual prunes it before its children are mounted, so its ``on_mount`` finds
    no header (or footer) to draw into; that is not an error."""
    script = write_script(tmp_path, [{"text": "hi"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "hi")
        [turn_id] = app.main.transcript.turns
        app.main.handle_event(shown(app.session.id, turn_id))  # in one step: shown, then Ctrl+Q
        app.exit(0)
    assert app.return_code == 0 and app._exception is None


async def test_a_live_view_of_a_turn_shown_as_stored_opens_in_that_turn(
    workspace: Path, tmp_path: Path
) -> None:
    """A live view whose turn the screen shows as stored (a resumed session) crashed the
    app: a stored turn's rows are a list, not the live turn's mapping (found by a helper)."""
    from vis_tui.widgets.live import LiveViewWidget
    from vis_tui.widgets.stored_turn import StoredTurnView

    from .support import store_session

    session_id = store_session(workspace, ["first", "second"])
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]), resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        turn_id = f"{session_id}-t1"
        assert isinstance(app.main.transcript.turns[turn_id], StoredTurnView)
        event = _live_event(session_id, turn_id)
        app.main.handle_event(replace(event, turn_id=turn_id))
        await pilot.pause()
        turn = app.main.transcript.turns[turn_id]
        assert not isinstance(turn, StoredTurnView) and turn.query(LiveViewWidget)
    assert app._exception is None
