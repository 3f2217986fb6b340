"""Honest status, more of it: a failed extension is announced on the main screen."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_core.paths import VisPaths
from vis_tui.app import VisApp
from vis_tui.widgets.transcript import PlainMessage

from .support import started, until, vis_app, write_script

BROKEN = '"""Fails on line 3."""\n\nraise RuntimeError("broken on purpose")\n'


def _warnings(app: VisApp) -> list[str]:
    """The warnings the transcript shows (plain messages of the ``warning`` class)."""
    return [m.source for m in app.main.transcript.query(PlainMessage) if m.has_class("warning")]


async def test_an_extension_that_fails_to_load_is_announced_on_the_main_screen(
    workspace: Path, tmp_path: Path
) -> None:
    folder = VisPaths.from_env().extensions_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "brokenext.py").write_text(BROKEN, encoding="utf-8")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        warnings = _warnings(app)
        assert len(warnings) == 1, warnings
        assert "brokenext" in warnings[0] and "vis doctor" in warnings[0]
        assert "broken on purpose" in warnings[0]


def _screen_text(app: object) -> str:
    import html
    import re

    svg = app.export_screenshot()  # type: ignore[attr-defined]
    return html.unescape(" ".join(re.findall(r"<text[^>]*>(.*?)</text>", svg))).replace("\xa0", " ")


async def test_the_compact_gist_is_shown_as_the_text_it_is(workspace: Path, tmp_path: Path) -> None:
    gist = "Removed the __pycache__ folders.\nTests: 3 passed in tests/__init__.py"
    script = write_script(tmp_path, [{"text": "Removed them."}, {"text": gist}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"clean the caches", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        await type_keys(pilot, *"/compact", "enter")
        await until(pilot, lambda: "Compacted" in _screen_text(app))
        await pilot.pause()
        message = _screen_text(app).split("Gist:", 1)[1]  # the /compact message, not the fold
        assert "Removed the __pycache__ folders." in message, message  # not bold "pycache"
        assert "Tests: 3 passed in tests/__init__.py" in message
        assert "folders. Tests" not in message  # its lines are kept


def test_a_mechanical_gist_has_no_escaped_line_breaks() -> None:
    from vis_core.context.gist import mechanical_gist

    turn = {"position": 1, "request": "fix\nthe tests", "steps": [], "answer": "Done:\nall pass"}
    text = mechanical_gist([turn])
    assert "\\n" not in text and "fix the tests" in text and "Done: all pass" in text


async def test_a_retry_notice_goes_when_the_retry_succeeds(workspace: Path, tmp_path: Path) -> None:
    """The retry was told in a warning toast that stayed for seconds after the answer came."""
    script = write_script(
        tmp_path,
        [{"error": {"status": 503, "message": "server busy"}}, {"text": "Answer after the retry."}],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"hello", "enter")
        progress = app.main.progress
        await until(pilot, lambda: "retrying" in str(progress.render()))
        assert "server busy" in str(progress.render())
        await until(pilot, lambda: not app.main.turn_running)
        await until(pilot, lambda: "Answer after the retry." in _screen_text(app))
        notices = [n.message for n in app._notifications]  # the toasts still up
        assert not any("retrying" in text for text in notices), notices
        assert "retrying" not in _screen_text(app)


async def test_a_command_left_running_updates_its_row_when_it_exits_live_and_on_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """The row said "running (pid …)" forever, also after resume."""
    from vis_tui.widgets.activity import ActivityRow

    from .support import seen_after_resume

    (workspace / "go").write_text("", encoding="utf-8")
    code = (
        "sh = await shell('while [ -e go ]; do sleep 0.05; done; echo finished')\n"
        "server = await shell('sleep 600')\nprint('left')"
    )
    app = vis_app(workspace, write_script(tmp_path, [{"code": code}, {"text": "Started."}]))
    async with app.run_test(size=(110, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"start it", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.query(ActivityRow)))
        row, server = app.main.query(ActivityRow)

        def header() -> str:
            return str(row.query_one(".activity-header").render())

        assert "running (pid" in header()
        (workspace / "go").unlink()  # the command ends now, between turns
        await until(pilot, lambda: "exit 0" in header())
        assert "running" not in header()
        aside = row.record.presentation.aside if row.record.presentation else None
        assert aside is not None and aside[:1].isdigit() and aside.endswith("s")
        assert "running (pid" in str(server.query_one(".activity-header").render())
        assert app.session is not None
        session_id = app.session.id
    # Quitting stopped the server: the resumed rows say how both ended, none says running.
    shown = await seen_after_resume(
        workspace, session_id, lambda resumed: resumed.main.transcript.as_text()
    )
    assert "exit 0" in shown and "stopped, exit -15" in shown, shown
    assert "running (pid" not in shown, shown


async def test_what_slash_commands_said_is_shown_again_on_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """A resumed session showed the turns, but not what /compact (or any command) said."""
    from .support import seen_after_resume
    from .test_resume_fidelity import _lines

    script = write_script(tmp_path, [{"text": "Removed them."}, {"text": "Cleaned the caches."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 50)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/goal keep the caches small", "enter")  # before the first turn
        await until(pilot, lambda: "keep the caches small" in _screen_text(app))
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        await type_keys(pilot, *"/compact", "enter")
        await until(pilot, lambda: "Compacted" in _screen_text(app))
        await type_keys(pilot, *"/undo 7", "enter")
        await until(pilot, lambda: "Nothing undone" in _screen_text(app))
        await pilot.pause()
        live = _lines(app, first="keep the caches small")
        assert app.session is not None
        session_id = app.session.id

    def every_line(shown: object) -> list[str]:
        return _lines(shown, first="keep the caches small")  # type: ignore[arg-type]

    resumed = await seen_after_resume(workspace, session_id, every_line, size=(100, 50))
    assert any("Compacted turn 1" in line for line in live)
    assert resumed == live


async def test_failed_extensions_are_listed_in_one_notice_with_the_hint_said_once(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    """Each failure was its own notice ending in the same `vis doctor` sentence (five filled
    the first screen), and a cause ending in '?' read '…at import?. Run'."""
    folder = VisPaths.from_env().extensions_dir
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(4):
        (folder / f"broken{index}.py").write_text(BROKEN, encoding="utf-8")
    (folder / "sleepy.py").write_text("import time\ntime.sleep(60)\n", encoding="utf-8")
    (vis_home / "config.toml").write_text('extension_load_timeout = "2"\n', encoding="utf-8")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        warnings = _warnings(app)
        assert len(warnings) == 1, warnings
        (notice,) = warnings
        assert notice.startswith("5 extensions failed to load"), notice
        for name in ("broken0", "broken1", "broken2", "broken3", "sleepy"):
            assert f"\n- {name}: " in notice, notice
        assert "an endless loop at import?\n" in notice and "?." not in notice
        assert notice.count("vis doctor") == 1 and notice.endswith(
            "Reload in Settings (F2) or start Vis again."
        )


async def test_the_status_says_it_loads_extensions_and_is_not_ready_meanwhile(
    workspace: Path, tmp_path: Path
) -> None:
    """An entry file slow at import held the start for the load limit while the status read
    'starting… │ … │ ○ ready', and nothing said what Vis waited for."""
    gate = tmp_path / "gate"
    folder = VisPaths.from_env().extensions_dir
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "slow.py").write_text(
        "import os, time\n"
        "import vis_core.extension as vis\n\n"
        f"while not os.path.exists({str(gate)!r}):  # the test opens it\n"
        "    time.sleep(0.02)\n"
        'vis.register_extension(vis.Extension(name="slow", description="Slow to import."))\n',
        encoding="utf-8",
    )
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(120, 30)) as pilot:
        bar = app.main.status_bar
        await until(pilot, lambda: "loading extensions" in str(bar.render()), seen=bar.render)
        assert "ready" not in str(bar.render())
        gate.write_text("", encoding="utf-8")
        await started(app, pilot)
        line = str(bar.render())
        assert "○ ready" in line and "loading" not in line and "starting" not in line, line
        assert not [m for m in app.main.transcript.query(PlainMessage) if m.has_class("warning")]
