"""A session open in one Vis cannot be opened by a second one: it says so and starts anew."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from textual.geometry import Region

from vis_tui.app import VisApp

from .support import started, store_session, until, vis_app


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
