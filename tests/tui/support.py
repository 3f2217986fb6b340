"""Helpers for TUI tests: the real app over a real Host, a scripted model, and waiting."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from textual.pilot import Pilot
from textual.screen import Screen

from vis_core.host import HostOptions
from vis_tui.app import VisApp

T = TypeVar("T")
S = TypeVar("S", bound=Screen[object])


def write_script(folder: Path, responses: list[dict[str, object]]) -> Path:
    """A scripted-provider script (JSON) standing in for the model."""
    path = folder / "script.json"
    path.write_text(json.dumps(responses), encoding="utf-8")
    return path


def store_session(workspace: Path, requests: list[str], *, title: str = "stored") -> str:
    """A stored session of ``workspace`` whose completed turns asked ``requests`` (turn n is
    answered ``answer n``), written to the database of ``$VIS_HOME``; its id."""
    from sample_turns import turn_events

    from vis_core.events import SessionCreated
    from vis_core.store import Store

    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        row = store.create_session(workspace.resolve(), workspace.resolve(), title=title)
        store.append(SessionCreated(row.id, title=title, workspace=str(workspace)))
        for n, request in enumerate(requests, start=1):
            store.append_many(
                turn_events(row.id, f"{row.id}-t{n}", request, f"answer {n}", [], position=n)
            )
    return row.id


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


async def until(
    pilot: Pilot[Any],
    condition: Callable[[], bool],
    seconds: float = 20,
    seen: Callable[[], object] | None = None,
) -> None:
    """Let the app run until ``condition`` holds (fails the test after ``seconds``, saying
    what ``seen`` returns then)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not condition():
        if loop.time() > deadline:
            shown = "" if seen is None else f": {seen()!r}"
            raise AssertionError(f"the app did not reach the expected state in time{shown}")
        await pilot.pause(0.02)


async def on_top(pilot: Pilot[Any], kind: type[S], seconds: float = 20) -> S:
    """The screen of ``kind`` once it is on top and mounted: a pushed screen is on top before
    it is composed and its ``on_mount`` has run."""
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, kind) and app.screen.is_mounted, seconds)
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


async def settled(pilot: Pilot[int], read: Callable[[], T], seconds: float = 20) -> T:
    """What ``read`` returns once the screen is done changing: every pending message handled
    and the same value read twice in a row (a read that raises is "not drawn yet")."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    last: object = settled
    while loop.time() < deadline:
        await pilot.pause()
        try:
            now = read()
        except Exception:  # not drawn yet; the last try below raises it
            now = settled
        if now is not settled and now == last:
            return now
        last = now
        await pilot.pause(0.02)
    return read()


async def seen_after_resume(
    workspace: Path,
    session_id: str,
    read: Callable[[VisApp], T],
    *,
    size: tuple[int, int] = (100, 60),
    from_top: bool = False,
) -> T:
    """What ``read`` sees in a new app that resumed ``session_id``, once it is drawn (scrolled
    to the top first when ``from_top``)."""
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=size) as pilot:
        await started(app, pilot)
        if from_top:
            await settled(pilot, lambda: app.main.transcript.virtual_size)
            app.main.transcript.scroll_home(animate=False)
        return await settled(pilot, lambda: read(app))
