"""Rows say how a call turned out: ✗ for a failed outcome, real durations, errors once."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.block_row import BlockRow

from .support import started, until, vis_app, write_script


def _block_said(app: object) -> str:
    """The last line of the (only) block row: its error."""
    (row,) = app.main.query(BlockRow)  # type: ignore[attr-defined]
    return str(row.query_one(".block-header").render()).splitlines()[-1].strip()


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
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: not app.main.turn_running)
        await until(pilot, lambda: len(app.main.transcript.turns) == 1)
        failed, passed = list(app.main.query(ActivityRow))
        header = str(failed.query_one(".activity-header").render())
        assert "✗" in header and "✓" not in header
        assert "waited" in header and "30 s" not in header
        assert failed.record.presentation is not None
        aside = failed.record.presentation.aside or ""
        assert aside.endswith("s") and float(aside[:-1]) < 29
        assert "✓" in str(passed.query_one(".activity-header").render())
        text = app.main.transcript.as_text()
        assert "ValueError" not in text
        notes = [str(note.render()) for note in app.main.query(".note")]
        assert not [n for n in notes if "config is missing" in n]  # the block's row says it
        assert _block_said(app) == "ValueError: the config is missing"


async def test_an_error_that_is_only_a_value_keeps_its_class_name(
    workspace: Path, tmp_path: Path
) -> None:
    """``KeyError: 'missing'`` says what went wrong; ``'missing'`` alone does not."""
    code = "settings = {'debug': True}\nprint(settings['missing'])"
    app = vis_app(workspace, write_script(tmp_path, [{"code": code}, {"text": "done"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: not app.main.turn_running)
        await until(pilot, lambda: len(app.main.transcript.turns) == 1)
        assert not app.main.query(".note")
        assert _block_said(app) == "KeyError: 'missing'"
