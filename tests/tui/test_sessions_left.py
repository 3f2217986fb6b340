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
from vis_tui.widgets.turn import TurnView

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


def refusal(session_id: str) -> str:
    """What another Vis is told when it asks for ``session_id`` (held here)."""
    locks = SessionLocks(VisPaths.from_env().data_dir / "sessions")
    try:
        locks.acquire(session_id)
    except SessionInUse as exc:
        return str(exc)
    locks.release(session_id)
    raise AssertionError(f"session {session_id} is not held")


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


async def test_a_session_shown_again_during_its_turn_is_the_one_running_it(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path,
        [
            {"text": "Looking first.", "code": "print('half way')\n" + WAIT_FOR_GO},
            {"text": "done"},
            {"text": "again"},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None and app.core is not None
        busy = app.session
        registry = app.core._host.registry
        app.main.prompt.insert("spin")
        await pilot.press("enter")
        await until(pilot, lambda: busy.printed(5).startswith("half way"))
        app.main.prompt.insert("/new")
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not busy)
        app.action_sessions()
        picker = await on_top(pilot, SessionsScreen)
        picker.dismiss(busy.id)
        await until(pilot, lambda: app.session is busy)  # the live one, not a second copy
        assert [s for s in registry.sessions if s.id == busy.id] == [busy]
        # the turn shows what it showed so far, as it goes on: not frozen as stored
        turns = app.main.transcript.turns
        await until(pilot, lambda: any(getattr(v, "blocks", None) for v in turns.values()))
        (view,) = turns.values()
        assert isinstance(view, TurnView) and view.status is None
        assert list(view.blocks) and "Looking first." in app.main.transcript.as_text()
        assert app.main.turn_running and app.main.status_bar.running
        app.main.prompt.insert("and again")  # waits behind the running turn
        await pilot.press("enter")
        assert app.main.queue == ["and again"]
        (workspace / "go").touch()
        await until(pilot, lambda: len(turns) == 2 and bool(list(turns.values())[-1].status))
        await until(pilot, lambda: "again" in app.main.transcript.as_text().split("> and again")[1])
        text = app.main.transcript.as_text()
        assert text.count("Looking first.") == 1 and text.count("done") == 1, text
        assert busy in registry.sessions and not openable(busy.id)  # the one shown holds it
        # and the live views of its extensions still reach the screen
        host = app.core._host
        call = CallContext(busy.id, host.space.root, host.space.project_root, runtime=host.runtime)
        await served.in_worker(call, lambda: live("Still here", [N.status("state", "ok")]))
        await until(pilot, lambda: bool(app.screen.query(LiveViewWidget)))
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        assert [t.request for t in store.turns(busy.id)] == ["spin", "and again"]


SLOW_COMMAND = """
import pathlib, time
import vis_core.extension as vis

def _slow(ctx):
    root = pathlib.Path(ctx["workspace_root"])
    (root / "started").touch()
    while not (root / "go").exists():
        time.sleep(0.02)
    return vis.ok("Slow", "finished slowly")

vis.register_extension(vis.Extension(
    name="slow", alias="slow", description="A slow command.",
    slash_commands=[vis.SlashCommand("slow", _slow, doc="Takes its time.")],
))
"""


async def test_a_session_left_during_a_slash_command_closes_once_it_ends(
    workspace: Path, vis_home: Path
) -> None:
    (vis_home / "extensions").mkdir()
    (vis_home / "extensions" / "slow.py").write_text(SLOW_COMMAND, encoding="utf-8")
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        busy = app.session
        app.main.prompt.insert("/slow")
        await pilot.press("enter")
        await until(pilot, lambda: (workspace / "started").exists())
        app.main.prompt.insert("/new")
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not busy)
        await pilot.pause()
        assert not openable(busy.id)  # its command goes on: kept open
        (workspace / "go").touch()
        await until(pilot, lambda: openable(busy.id))
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        noted = [row.event for row in store.events(busy.id, types=["CommandNoted"])]
    assert [getattr(event, "ok", None) for event in noted] == [True]  # it ended as it would


async def test_a_vis_refused_a_session_left_during_its_turn_is_told_so(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path, [{"code": WAIT_FOR_GO}, {"text": "done"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.session is not None
        busy = app.session
        assert "close it there first" in refusal(busy.id)  # shown here
        app.main.prompt.insert("spin")
        await pilot.press("enter")
        await until(pilot, lambda: busy.running)
        app.main.prompt.insert("/new")
        await pilot.press("enter")
        await until(pilot, lambda: app.session is not busy)
        await pilot.pause()
        said = refusal(busy.id)
        assert "close it there first" not in said and "shows another session now" in said, said
        app.action_sessions()  # shown again: held as shown
        picker = await on_top(pilot, SessionsScreen)
        picker.dismiss(busy.id)
        await until(pilot, lambda: app.session is busy)
        assert "close it there first" in refusal(busy.id)
        (workspace / "go").touch()
        await until(pilot, lambda: not busy.running)


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
