"""Plan mode in the app: the status bar says so, a planning turn ends with the approval form
(keyboard only), Esc keeps planning, Ctrl+S approves and the plan runs; a resume still plans."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.screens.form import FormScreen

from .support import on_top, seen_after_resume, started, until, vis_app, write_script

PATCH = 'await patch("a.txt", 0, "x\\n")'


async def test_plan_mode_asks_for_approval_and_the_approved_plan_runs(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    script = write_script(
        tmp_path,
        [
            {"code": PATCH},
            {"text": "Plan: write a.txt"},
            {"text": "Plan v2: write a.txt holding x"},
            {"code": PATCH},
            {"text": "Done."},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        bar = app.main.status_bar
        await type_keys(pilot, *"/plan", "enter")
        await until(pilot, lambda: bar.planning)
        assert "◇ plan mode" in str(bar.render())
        await type_keys(pilot, *"make a.txt", "enter")
        await on_top(pilot, FormScreen)
        assert app.screen.form.title == "Approve the plan?"  # type: ignore[attr-defined]
        assert not (workspace / "a.txt").exists()
        await pilot.press("escape")  # keep planning
        await until(pilot, lambda: not isinstance(app.screen, FormScreen))
        assert bar.planning and app.session.plan.active  # type: ignore[union-attr]
        await type_keys(pilot, *"with x please", "enter")
        await on_top(pilot, FormScreen)
        await type_keys(pilot, *"keep it short", "ctrl+s")  # the notes field has the focus
        await until(pilot, lambda: app.main.transcript.last_answer == "Done.")
        await until(pilot, lambda: not app.main.turn_running)
        requests = app.session.model.provider.requests  # type: ignore[union-attr]
        session_id = app.session.id  # type: ignore[union-attr]
        assert not bar.planning and "◇" not in str(bar.render())
    last_request = next(m.text for m in reversed(requests[3].messages) if m.role == "user")
    assert "approved the plan" in last_request
    assert "Plan v2: write a.txt holding x" in last_request
    assert last_request.endswith("The person adds: keep it short")
    assert (workspace / "a.txt").read_text() == "x\n"
    resumed = await seen_after_resume(workspace, session_id, lambda a: a.main.status_bar.planning)
    assert not resumed


async def test_a_resumed_session_still_plans(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    app = vis_app(workspace, write_script(tmp_path, []))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/plan", "enter")
        await until(pilot, lambda: app.main.status_bar.planning)
        session_id = app.session.id  # type: ignore[union-attr]
    planning = await seen_after_resume(workspace, session_id, lambda a: a.main.status_bar.planning)
    assert planning
