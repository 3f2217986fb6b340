"""A command left running shows one quiet line in the turn when it ends, live and after
resume (the model reads its output with its next request)."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.app import VisApp

from .support import started, until, vis_app, write_script

START = 'bg = await shell("while [ ! -e go ]; do sleep 0.01; done; echo built; exit 2")'
FINISH = """
import asyncio, pathlib
pathlib.Path("go").touch()
for _ in range(3000):  # until the command has ended (wait() would read its end itself)
    if "running" not in repr((await shells())[0]):
        break
    await asyncio.sleep(0.01)
"""


def _lines(app: VisApp) -> list[str]:
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return ["".join(seg.text for seg in strip).strip() for strip in strips]


async def test_a_background_command_ends_with_a_note_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path, [{"code": START}, {"code": FINISH}, {"text": "It ended."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"build", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        await pilot.pause()
        live = [line for line in _lines(app) if "Background command" in line]
        session_id = app.session.id
    assert len(live) == 1 and live[0].startswith("⋯ Background command sh-")
    assert " ended: exit 2 after " in live[0] and live[0].endswith("exit 2")

    resumed = vis_app(workspace, resume=session_id)
    async with resumed.run_test(size=(120, 40)) as pilot:
        await started(resumed, pilot)
        await pilot.pause()
        again = [line for line in _lines(resumed) if "Background command" in line]
    assert again == live


async def test_the_status_bar_counts_commands_left_running_until_they_end(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path, [{"code": START}, {"text": "Started."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        bar = app.main.status_bar
        assert bar.background == 0 and "background" not in str(bar.render())
        await type_keys(pilot, *"build", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Started.")
        await until(pilot, lambda: not app.main.turn_running)
        assert bar.background == 1
        assert str(bar.render()).endswith("○ ready │ ◌ 1 background command")
        (workspace / "go").touch()  # the command ends between turns: its row's redraw says so
        await until(pilot, lambda: bar.background == 0)
        assert "background" not in str(bar.render())
