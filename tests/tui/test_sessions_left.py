"""A session the app shows no more (``/new``, ``/fork``, ``/sessions``) closes once it is idle,
so another Vis may open it; quitting names a session to resume only when it was kept."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from cli_support import vis
from forms import served

from vis_core.extension import live_nodes as N
from vis_core.extension.context import CallContext
from vis_core.extension.live import live
from vis_core.model.turn import TurnStatus
from vis_core.paths import VisPaths
from vis_core.store import Store
from vis_core.store.session_lock import SessionInUse, SessionLocks
from vis_tui.screens.sessions import SessionsScreen
from vis_tui.widgets.live import LiveViewWidget

from .support import on_top, started, store_session, until, vis_app, write_script

# a block that runs until the test makes the file ``go`` in the workspace
WAIT_FOR_GO = (
    "import asyncio, pathlib\n"
    "while not pathlib.Path('go').exists():\n"
    "    await asyncio.sleep(0.02)\n"
    "print('went')"
)


def openable(session_id: str) -> bool:
    """Whether another Vis could open ``session_id`` now (the lock the store's Vis takes)."""
    locks = SessionLocks(VisPaths.from_env().data_dir / "sessions")
    try:
        locks.acquire(session_id)
    except SessionInUse:
        return False
    locks.release(session_id)
    return True


def _stored(session_id: str) -> bool:
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        return store.get_session(session_id) is not None


async def test_sessions_the_app_switched_away_from_open_in_another_vis(
    workspace: Path, tmp_path: Path
) -> None:
    spin = store_session(workspace, ["first", "second"], title="spin")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]), resume=spin)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None and app.session.id == spin
        assert not openable(spin)  # shown here: held
        app.main.prompt.insert("/fork 1")
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not None and app.session.id != spin)
        fork = app.session.id
        await until(pilot, lambda: openable(spin))
        app.main.prompt.insert("/new")
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not None and app.session.id not in (spin, fork))
        new = app.session.id
        await until(pilot, lambda: openable(fork))
        assert not openable(new)
        # a second Vis runs a turn in the session this one showed first
        script = tmp_path / "other.json"
        script.write_text('[{"text": "from the other Vis"}]', encoding="utf-8")
        other = await asyncio.to_thread(
            vis,
            *("run", "--resume", spin, "--provider", "scripted", "--script", str(script), "more"),
            cwd=workspace,
            env_home=os.environ["VIS_HOME"],
        )
        assert other.returncode == 0, other.stderr
        # the picker opens the fork again; the new session, never used, closes and goes
        app.action_sessions()
        picker = await on_top(pilot, SessionsScreen)
        picker.dismiss(fork)
        await until(pilot, lambda: app.session is not None and app.session.id == fork)
        await until(pilot, lambda: openable(new))
        assert not openable(fork)
    assert not _stored(new)
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        assert [t.request for t in store.turns(spin)] == ["first", "second", "more"]


async def test_a_session_left_during_its_turn_closes_once_the_turn_ends(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path, [{"code": WAIT_FOR_GO}, {"text": "done"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        busy = app.session
        app.main.prompt.insert("spin")
        await pilot.press("enter")
        await until(pilot, lambda: busy.running)
        app.main.prompt.insert("/new")
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not busy)
        await pilot.pause()
        assert busy.running and not openable(busy.id)  # its turn goes on: kept open
        # the new session is ready: a message starts its turn, not queued behind the old one
        assert not app.main.turn_running and not app.main.status_bar.running
        app.main.prompt.insert("hello")
        await pilot.press("enter")
        await pilot.pause()
        assert not app.main.queue
        (workspace / "go").touch()
        await until(pilot, lambda: openable(busy.id))
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        (turn,) = store.turns(busy.id)
    assert turn.status == TurnStatus.COMPLETED  # not cut short by the switch


async def test_a_session_left_with_a_command_running_closes_once_it_ends(
    workspace: Path, tmp_path: Path
) -> None:
    command = "await shell('while [ ! -e stop ]; do sleep 0.05; done')"
    script = write_script(tmp_path, [{"code": command}, {"text": "left it running"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        busy = app.session
        app.main.prompt.insert("serve")
        await pilot.press("enter")
        await until(pilot, lambda: not app.main.turn_running)
        assert busy.background_commands == 1
        app.main.prompt.insert("/new")
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not busy)
        await pilot.pause()
        assert busy.background_commands == 1 and not openable(busy.id)  # not stopped
        (workspace / "stop").touch()
        await until(pilot, lambda: openable(busy.id))


async def test_a_session_opened_again_while_it_settles_stays_held(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path, [{"code": WAIT_FOR_GO}, {"text": "done"}, {"text": "again"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        busy = app.session
        app.main.prompt.insert("spin")
        await pilot.press("enter")
        await until(pilot, lambda: busy.running)
        app.main.prompt.insert("/new")
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not busy)
        app.action_sessions()
        picker = await on_top(pilot, SessionsScreen)
        picker.dismiss(busy.id)
        await until(pilot, lambda: app.session is not None and app.session.id == busy.id)
        again = app.session
        (workspace / "go").touch()
        assert app.core is not None
        registry = app.core._host.registry  # the earlier one closes once its turn ended
        await until(pilot, lambda: busy not in registry.sessions and not app.main.turn_running)
        assert not openable(busy.id)  # the one shown holds it
        app.main.prompt.insert("and again")
        await pilot.press("enter")
        turns = app.main.transcript.turns
        await until(pilot, lambda: len(turns) == 2 and bool(list(turns.values())[-1].status))
        # and the live views of its extensions still reach the screen (its id kept its route)
        host = app.core._host
        call = CallContext(again.id, host.space.root, host.space.project_root, runtime=host.runtime)
        await served.in_worker(call, lambda: live("Still here", [N.status("state", "ok")]))
        await until(pilot, lambda: bool(app.screen.query(LiveViewWidget)))
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        assert [t.request for t in store.turns(busy.id)] == ["spin", "and again"]


async def test_quitting_a_session_nobody_used_names_no_session_to_resume(
    workspace: Path,
) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        session_id = app.session.id
    assert not _stored(session_id)  # not kept: `vis --resume` would not find it
    assert app.resume_line is None
