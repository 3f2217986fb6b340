"""A command file's /NAME in completion and F1, sent as a turn with its arguments."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys
from textual.widgets import Static

from vis_tui.screens.help import HelpScreen

from .support import started, until, vis_app, write_script


async def test_a_command_file_completes_shows_in_f1_and_sends_its_request(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "commands").mkdir()
    (vis_home / "commands" / "explain.md").write_text(
        "---\ndescription: Explain a file simply\nargument-hint: FILE\n---\n"
        "Explain $1 to a newcomer.\n"
    )
    app = vis_app(workspace, write_script(tmp_path, [{"text": "It prints hi."}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/expl")
        await until(pilot, lambda: app.main.completion.display)
        offered = [c.text for c in app.main.completion.choices]
        assert offered == ["/explain "]
        await pilot.press("escape", "ctrl+c", "f1")
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#help-commands")
        rows = [str(cell.render()) for cell in table.query(Static)]
        row = rows.index("/explain FILE")
        assert rows[row + 1] == "Explain a file simply  (personal file)"
        await pilot.press("escape")
        await type_keys(pilot, *"/explain main.py", "enter")
        await until(pilot, lambda: len(app.session.model.provider.requests) == 1)  # type: ignore[union-attr]
        await until(pilot, lambda: not app.main.turn_running)
        request = app.session.model.provider.requests[0]  # type: ignore[union-attr]
        history = app.core.prompts(app.session.id)  # type: ignore[union-attr]
    assert request.messages[0].text == "Explain main.py to a newcomer."
    assert history[-1] == "/explain main.py"  # saveable: ↑ brings the command back


async def test_a_command_files_model_runs_its_turn_or_says_why_not(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "commands").mkdir()
    (vis_home / "commands" / "quick.md").write_text("---\nmodel: nowhere\n---\nBe quick.\n")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "ok"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/quick", "enter")
        await until(pilot, lambda: bool(app.main.transcript.query(".error")))
        error = app.main.transcript.query(".error").last().source  # type: ignore[attr-defined]
        assert "Cannot switch the model" in error
        assert not app.session.model.provider.requests  # type: ignore[union-attr]
