"""The progress line while a turn runs, and a cancel that holds the queue for the person."""

from __future__ import annotations

import re
from pathlib import Path

from pilot_keys import type_keys
from sample_turns import record

from vis_core.events import (
    ActivityStarted,
    AssistantDelta,
    IterationStarted,
    TurnEnded,
    TurnStarted,
    UsageReported,
)
from vis_core.model.activity import ActivityPresentation, ActivityState
from vis_core.model.usage import Usage

from .support import started, until, vis_app, write_script


async def test_the_progress_line_says_what_the_turn_is_doing(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 30)) as pilot:
        progress = app.main.progress
        assert not progress.display
        app.feed([TurnStarted("s", turn_id="t1", position=1, request="go")])
        await pilot.pause()
        line = str(progress.render())
        assert progress.display and "waiting for the model" in line
        assert "0s" in line and "Esc to interrupt" in line
        app.feed([AssistantDelta("s", turn_id="t1", text="x" * 400)])
        assert "writing the answer" in str(progress.render()) and "↓ 100 tokens" in str(
            progress.render()
        )
        app.feed(
            [
                UsageReported("s", turn_id="t1", usage=Usage(input=900, output=120)),
                IterationStarted("s", turn_id="t1", iteration_id="i1", index=1),
            ]
        )
        assert "running a block" in str(progress.render())
        assert "↓ 120 tokens" in str(progress.render())
        running = record(
            "a1", ActivityPresentation("Run command", "sleep 5"), state=ActivityState.RUNNING
        )
        app.feed([ActivityStarted("s", activity=running)])
        assert "waiting on Run command" in str(progress.render())
        app.feed([TurnEnded("s", turn_id="t1")])
        await pilot.pause()
        assert not progress.display


def _slow_script(tmp_path: Path) -> Path:
    slow = {"text": "word " * 400, "chunk": 5, "delay_ms": 20}
    return write_script(tmp_path, [slow, {"text": "second answer"}, slow, {"text": "third"}])


async def test_a_cancel_holds_the_queue_until_enter(workspace: Path, tmp_path: Path) -> None:
    app = vis_app(workspace, _slow_script(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        main = app.main
        await type_keys(pilot, *"first", "enter")
        await until(
            pilot, lambda: main.progress.display and "writing" in str(main.progress.render())
        )
        await type_keys(pilot, *"second", "enter")
        assert main.queue == ["second"]
        await pilot.press("escape")
        await until(pilot, lambda: not main.turn_running)
        await pilot.pause(0.3)
        assert main.queue == ["second"] and len(main.transcript.turns) == 1
        assert "Enter sends them" in str(main.query_one("#queue").children[0].render())
        await pilot.press("enter")  # an empty prompt: the queue goes on
        await until(pilot, lambda: len(main.transcript.turns) == 2 and not main.turn_running)
        assert main.queue == [] and not main.queue_paused


async def test_ctrl_c_cancels_and_esc_drops_the_queue(workspace: Path, tmp_path: Path) -> None:
    app = vis_app(workspace, _slow_script(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        main = app.main
        await type_keys(pilot, *"first", "enter")
        await until(
            pilot, lambda: main.progress.display and "writing" in str(main.progress.render())
        )
        await type_keys(pilot, *"later", "enter")
        await pilot.press("ctrl+c")
        await until(pilot, lambda: not main.turn_running)
        await pilot.pause(0.3)
        assert main.queue == ["later"] and len(main.transcript.turns) == 1
        await pilot.press("escape")
        assert main.queue == [] and not main.queue_paused
        await pilot.pause(0.3)
        assert len(main.transcript.turns) == 1


async def test_a_narrow_progress_line_keeps_esc_to_interrupt(
    workspace: Path, tmp_path: Path
) -> None:
    """At 60 columns the line was cut at its end, "Esc to interrupt" with it, the one way
    out a newcomer reads there: the tokens go first now, then the time, then what Vis does
    is cut short."""
    app = vis_app(workspace, _slow_script(tmp_path))
    async with app.run_test(size=(60, 20)) as pilot:
        await started(app, pilot)
        main = app.main
        await type_keys(pilot, *"first", "enter")
        await until(
            pilot, lambda: main.progress.display and "writing" in str(main.progress.render())
        )
        line = main.progress.render()
        assert re.fullmatch(r". writing the answer  ·  \d+s  ·  Esc to interrupt", line.plain)
        assert line.cell_length <= main.progress.content_size.width
        await pilot.press("escape")
        await until(pilot, lambda: not main.turn_running)
