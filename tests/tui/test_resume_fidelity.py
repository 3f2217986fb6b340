"""A session resumed shows what was shown live: the same lines, in the same order."""

from __future__ import annotations

from pathlib import Path

from vis_tui.app import VisApp

from .support import started, until, vis_app, write_script


def _lines(app: VisApp) -> list[str]:
    """The transcript's text from the first request on (what the session shows)."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    lines = ["".join(seg.text for seg in strip).rstrip() for strip in strips]
    start = next(n for n, line in enumerate(lines) if "› first" in line)
    end = next(n for n, line in enumerate(lines) if "▔" in line or "No model is" in line)
    shown = lines[start:end]
    while shown and not shown[-1].strip():
        shown.pop()
    return shown


async def test_a_turn_looks_the_same_live_and_after_resume(workspace: Path, tmp_path: Path) -> None:
    script = write_script(
        tmp_path,
        [
            {"text": "I'll look **first**.", "code": "await ls('.')\nawait shell('true')"},
            {
                "text": "Now the failing part.",
                "code": "await shell('false')\nraise ValueError('bad input')",
            },
            {"text": "All **done**: one command failed."},
            {"text": "partial " * 300, "chunk": 5, "delay_ms": 20},
        ],
    )
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 60)) as pilot:
        await started(app, pilot)
        await pilot.press(*"first", "enter")
        await until(
            pilot, lambda: not app.main.turn_running and len(app.main.transcript.turns) == 1
        )
        await pilot.press(*"second", "enter")
        await until(pilot, lambda: "writing" in str(app.main.progress.render()))
        await pilot.pause(0.3)
        await pilot.press("escape")
        await until(pilot, lambda: not app.main.turn_running)
        await pilot.pause(0.5)
        app.main.transcript.scroll_home(animate=False)
        await pilot.pause(0.2)
        live = _lines(app)
        session_id = app.session.id
    resumed_app = vis_app(workspace, resume=session_id)
    async with resumed_app.run_test(size=(100, 60)) as pilot:
        await started(resumed_app, pilot)
        resumed_app.main.transcript.scroll_home(animate=False)
        await pilot.pause(0.2)
        resumed = _lines(resumed_app)
    assert "The code block stopped: bad input" in "\n".join(live)
    assert any("partial partial" in line for line in resumed)
    assert resumed == live
