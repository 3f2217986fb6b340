"""Helpers for the form and live view Pilot tests: the real app and waiting for a state."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot

from vis_core.host import HostOptions
from vis_tui.app import VisApp


def vis_app(workspace: Path) -> VisApp:
    return VisApp(HostOptions(workspace=workspace), frozen=True)


async def started(app: VisApp, pilot: Pilot[Any]) -> None:
    await asyncio.wait_for(app.ready.wait(), 20)
    await pilot.pause()


async def until(pilot: Pilot[Any], condition: Callable[[], bool], seconds: float = 10) -> None:
    """Let the app run until ``condition`` holds (fails the test after ``seconds``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("the app did not reach the expected state in time")
        await pilot.pause(0.02)
