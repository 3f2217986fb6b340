"""What the app's first frame waits for: the modules it imports, and the collector it hands back."""

from __future__ import annotations

import gc
import subprocess
import sys
from pathlib import Path

from vis_tui.widgets.system_message import SystemMessage

from .support import started, until, vis_app

# Loaded with the first answer, code block or Markdown message, or the session's first event
# (or once the session is shown).
LATER = (
    "markdown_it",
    "pygments",
    "rich.syntax",
    "rich.markdown",
    "textual.widgets._markdown",
    "vis_core.events",
)


def test_the_first_frame_imports_no_markdown_parser_highlighter_or_core_events() -> None:
    code = f"import sys, vis_tui.app; print(*(m for m in {LATER!r} if m in sys.modules))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.split() == []


async def test_the_collector_comes_back_once_the_host_is_open(workspace: Path) -> None:
    gc.disable()  # as `vis` starts the app (vis_core/cli.py)
    try:
        app = vis_app(workspace)
        async with app.run_test(size=(100, 30)) as pilot:
            await started(app, pilot)
            assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()  # what the app set aside, for the tests after this one


async def test_the_collector_comes_back_when_the_host_cannot_open(workspace: Path) -> None:
    async def fail() -> None:
        raise OSError("the disk is full")

    gc.disable()
    try:
        app = vis_app(workspace, open_core=fail)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(
                pilot,
                lambda: any(
                    "could not start" in message.source
                    for message in app.main.transcript.query(SystemMessage)
                ),
            )
            assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()  # what the app set aside, for the tests after this one
