"""Helpers for TUI tests: the real app over a real Host, a scripted model, and waiting."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from vis_core.host import HostOptions
from vis_tui.app import VisApp


def write_script(folder: Path, responses: list[dict[str, object]]) -> Path:
    """A scripted-provider script (JSON) standing in for the model."""
    path = folder / "script.json"
    path.write_text(json.dumps(responses), encoding="utf-8")
    return path


def vis_app(workspace: Path, script: Path | None = None, **kwargs: object) -> VisApp:
    options = HostOptions(
        workspace=workspace,
        provider="scripted" if script else None,
        script=script,
    )
    return VisApp(options, frozen=True, **kwargs)  # type: ignore[arg-type]


async def started(app: VisApp, pilot: Pilot[int]) -> None:
    """Wait until the Host is open and the session shown."""
    await asyncio.wait_for(app.ready.wait(), 20)
    await pilot.pause()


async def until(pilot: Pilot[int], condition: Callable[[], bool], seconds: float = 20) -> None:
    """Let the app run until ``condition`` holds (fails the test after ``seconds``)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("the app did not reach the expected state in time")
        await pilot.pause(0.02)
