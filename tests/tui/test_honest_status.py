"""Rows say how a call turned out: ✗ for a failed outcome, real durations, errors once."""

from __future__ import annotations

from pathlib import Path

from vis_tui.widgets.activity import ActivityRow

from .support import started, until, vis_app, write_script


async def test_a_failed_command_shows_a_cross_and_its_real_duration(
    workspace: Path, tmp_path: Path
) -> None:
    code = (
        "sh = await shell('sleep 0.2; exit 3')\n"
        "await sh.wait(30)\n"
        "await shell('true')\n"
        "raise ValueError('the config is missing')"
    )
    app = vis_app(workspace, write_script(tmp_path, [{"code": code}, {"text": "done"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: not app.main.turn_running)
        await until(pilot, lambda: len(app.main.transcript.turns) == 1)
        failed, passed = list(app.main.query(ActivityRow))
        header = str(failed.query_one(".activity-header").render())
        assert "✗" in header and "✓" not in header
        assert "waited" in header and "30 s" not in header
        assert failed.record.presentation is not None
        aside = failed.record.presentation.aside or ""
        assert aside.endswith(" s") and float(aside[:-2]) < 29
        assert "✓" in str(passed.query_one(".activity-header").render())
        text = app.main.transcript.as_text()
        assert "ValueError" not in text
        notes = [str(n.render()) for n in app.main.query(".note")]
        assert notes == ["The code block stopped: the config is missing"]


async def test_an_error_that_is_only_a_value_keeps_its_class_name(
    workspace: Path, tmp_path: Path
) -> None:
    """``KeyError: 'missing'`` says what went wrong; ``'missing'`` alone does not."""
    code = "settings = {'debug': True}\nprint(settings['missing'])"
    app = vis_app(workspace, write_script(tmp_path, [{"code": code}, {"text": "done"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await pilot.press(*"go", "enter")
        await until(pilot, lambda: not app.main.turn_running)
        await until(pilot, lambda: len(app.main.transcript.turns) == 1)
        notes = [str(n.render()) for n in app.main.query(".note")]
        assert notes == ["The code block stopped: KeyError: 'missing'"]
