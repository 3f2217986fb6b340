"""SVG snapshots of block rows: folded and opened, with a removed file and an error."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from settle import drawn
from textual.pilot import Pilot

from vis_core.events import (
    AssistantDelta,
    AssistantMessage,
    BlockFinished,
    Event,
    IterationStarted,
    TurnEnded,
    TurnStarted,
)
from vis_core.host import HostOptions
from vis_core.model.block import FileChange, FileChangeKind
from vis_core.model.turn import TurnStatus
from vis_tui.app import VisApp
from vis_tui.widgets.block_row import BlockRow

WORKSPACE = "/tmp/vis-snapshots/project"

CODE = """import os
os.remove("README.md")
with open("notes.txt", "w") as f:
    f.write("one\\ntwo\\n")
print(sorted(os.listdir(".")))
"""
README_DIFF = "--- a/README.md\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-# Project\n-Read me.\n"
NOTES_DIFF = "--- /dev/null\n+++ b/notes.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n"
ERROR = (
    "Traceback (most recent call last):\n"
    '  File "<block>", line 2, in <module>\n'
    "ZeroDivisionError: division by zero"
)


def _app() -> VisApp:
    script = Path(WORKSPACE) / "script.json"
    script.write_text('[{"text": "unused"}]', encoding="utf-8")
    options = HostOptions(workspace=Path(WORKSPACE), provider="scripted", script=script)
    return VisApp(options, frozen=True)


def _events(sid: str) -> list[Event]:
    files = (
        FileChange("README.md", FileChangeKind.REMOVED, README_DIFF, 0, 2),
        FileChange("notes.txt", FileChangeKind.CREATED, NOTES_DIFF, 2, 0),
    )
    return [
        TurnStarted(sid, turn_id="t1", position=1, request="Tidy the project"),
        AssistantDelta(sid, turn_id="t1", text="I'll remove the old README."),
        AssistantMessage(sid, turn_id="t1", iteration=0, text="I'll remove the old README."),
        IterationStarted(sid, turn_id="t1", iteration_id="i1", index=1, code=CODE),
        BlockFinished(
            sid,
            turn_id="t1",
            iteration_id="i1",
            stdout="['notes.txt', 'src']\n",
            duration=0.21,
            files=files,
        ),
        IterationStarted(
            sid, turn_id="t1", iteration_id="i2", index=2, code="total = 0\n1 / total"
        ),
        BlockFinished(sid, turn_id="t1", iteration_id="i2", error=ERROR, duration=0.02),
        AssistantDelta(sid, turn_id="t1", text="Done: removed README."),
        AssistantMessage(sid, turn_id="t1", iteration=2, text="Done: removed README."),
        TurnEnded(sid, turn_id="t1", status=TurnStatus.COMPLETED, content="Done"),
    ]


def _blocks(opened: bool) -> Any:
    async def run(pilot: Pilot[Any]) -> None:
        app = pilot.app
        assert isinstance(app, VisApp)
        await asyncio.wait_for(app.ready.wait(), 20)
        await pilot.pause()
        assert app.session is not None
        app.main.feed_events(_events(app.session.id))
        await drawn(pilot)
        if opened:
            for row in app.main.query(BlockRow):
                row.expanded = True
        app.main.prompt.focus()
        await drawn(pilot)
        app.main.transcript.scroll_home(animate=False)
        await pilot.pause()

    return run


def test_block_rows_folded(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=(100, 30), run_before=_blocks(False))


def test_block_rows_opened(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=(100, 50), run_before=_blocks(True))
