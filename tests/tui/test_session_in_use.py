"""A session open in one Vis cannot be opened by a second one: it says so and starts anew."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from textual.geometry import Region
from textual.widgets import Input, OptionList

from vis_core.store import Store
from vis_tui.app import VisApp
from vis_tui.screens.sessions import SessionsScreen

from .support import on_top, started, store_session, until, vis_app


def _painted(app: VisApp) -> str:
    lines = []
    for widget in app.screen.walk_children(with_self=True):
        if widget.display and widget.size.area:
            width, height = widget.size
            for strip in widget.render_lines(Region(0, 0, width, height)):
                lines.append("".join(segment.text for segment in strip))
    return "\n".join(lines)


HOLDER = """
import asyncio, sys
from pathlib import Path
from vis_core.host import Host, HostOptions

async def main():
    host = await Host.open(HostOptions(workspace=Path(sys.argv[1])))
    await host.open_session(sys.argv[2])
    print("open", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    await host.close()

asyncio.run(main())
"""


async def test_a_second_app_refuses_a_session_open_in_another(workspace: Path) -> None:
    session_id = store_session(workspace, ["first request"])
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(workspace), session_id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        app = vis_app(workspace, resume=session_id)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(app, pilot)
            await until(pilot, lambda: app.session is not None)
            assert app.session is not None and app.session.id != session_id
            text = " ".join(_painted(app).split())
            assert "Cannot resume" in text and "open in another Vis" in text
    finally:
        assert holder.stdin is not None
        holder.stdin.write("\n")
        holder.stdin.close()
        holder.wait(30)
    app = vis_app(workspace, resume=session_id)  # closed there: opens here
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await until(pilot, lambda: app.session is not None)
        assert app.session is not None and app.session.id == session_id


async def test_a_session_of_another_folder_is_resumed_only_from_there(tmp_path: Path) -> None:
    """Its files, checkpoints, trust and settings are its folder's: opened from another one it
    is refused, naming that folder (``vis --resume`` and the picker's search across projects),
    rather than run in the folder the app was started in."""
    there, here = tmp_path / "there", tmp_path / "here"
    there.mkdir()
    here.mkdir()
    theirs = store_session(there, ["a request about the notes there"], title="theirs")
    app = vis_app(here, resume=theirs)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        await until(pilot, lambda: app.session is not None)
        assert app.session is not None and app.session.id != theirs
        text = " ".join(_painted(app).split())
        assert "Cannot resume" in text and f"belongs to {there.resolve()}" in text
        shown = app.session.id
        app.action_sessions()  # the picker's search reaches every project's sessions
        picker = await on_top(pilot, SessionsScreen)
        picker.query_one(Input).value = "notes there"
        await until(pilot, lambda: picker.query_one(OptionList).get_option_at_index(0).id == theirs)
        await pilot.press("enter")
        await until(pilot, lambda: any("belongs to" in n.message for n in app._notifications))
        assert app.session is not None and app.session.id == shown
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        assert [t.request for t in store.turns(theirs)] == ["a request about the notes there"]
