"""A command left running shows one quiet line in the turn when it ends, live and after
resume (the model reads its output with its next request)."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.app import VisApp

from .support import seen_after_resume, settled, started, until, vis_app, write_script

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


async def test_a_command_that_ends_between_turns_is_noted_after_the_turn_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """A command left running that ends after its turn: its line was drawn only once the
    next turn sent its request, under it, as if it had ended in that turn (and never, if no
    turn followed). It shows when it ends, after the turn, where a command's note goes; the
    next request carries it before the person's words; a resume shows it there again."""
    from .support import seen_after_resume, settled

    script = [{"code": START}, {"text": "Started."}, {"text": "Second answer."}]
    (workspace / ".gitignore").write_text("go\n")  # the test's signal: no file a block changed
    app = vis_app(workspace, write_script(tmp_path, script))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"build", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        (workspace / "go").touch()
        await until(pilot, lambda: any("Background command" in line for line in _lines(app)))
        written = [line for line in _lines(app) if line]
        assert written.index("Started.") < _noted(written)
        await type_keys(pilot, *"again", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Second answer.")
        await until(pilot, lambda: not app.main.turn_running)
        live = await settled(pilot, lambda: _lines(app))
        requests = app.session.model.provider.requests  # type: ignore[union-attr]
        session_id = app.session.id
    written = [line for line in live if line]
    assert written.index("Started.") < _noted(written) < written.index("› again"), written
    asked = requests[2].messages[-1].text
    assert asked.startswith("[Vis: the background command sh-") and asked.endswith("\n\nagain")
    resumed = await seen_after_resume(workspace, session_id, _lines, size=(120, 40))
    assert _turns(resumed) == _turns(live), "\n".join(live) + "\n=====\n" + "\n".join(resumed)


async def test_a_command_that_ends_in_a_later_turn_after_its_request_is_noted_after_that_turn(
    workspace: Path, tmp_path: Path
) -> None:
    """A command left running by the first turn ends while the second waits on the model,
    after that turn's last request: no request tells it, so its line showed nowhere until a
    third turn's request. It shows as the second turn ends, after it (not in the first turn,
    whose row says how it ended), live and after resume."""
    from .support import seen_after_resume, settled

    script = [
        {"code": START},
        {"text": "Started."},
        {"text": "Never said.", "delay_ms": 60_000},  # the person stops it
    ]
    (workspace / ".gitignore").write_text("go\n")  # the test's signal: no file a block changed
    app = vis_app(workspace, write_script(tmp_path, script))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"build", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        await type_keys(pilot, *"wait", "enter")
        requests = app.session.model.provider.requests  # type: ignore[union-attr]
        await until(pilot, lambda: len(requests) == 3)  # the second turn's request went out
        (workspace / "go").touch()
        await until(pilot, lambda: app.main.status_bar.background == 0)  # its row is redrawn
        await pilot.press("escape")
        await until(pilot, lambda: any("Background command" in line for line in _lines(app)))
        live = await settled(pilot, lambda: _lines(app))
        session_id = app.session.id
    written = [line for line in live if line]
    assert written.index("› wait") < written.index("Cancelled by the user.") < _noted(written)
    resumed = await seen_after_resume(workspace, session_id, _lines, size=(120, 40))
    assert _turns(resumed) == _turns(live), "\n".join(live) + "\n=====\n" + "\n".join(resumed)


def _noted(lines: list[str]) -> int:
    """Where the one background command's line is among ``lines``."""
    (index,) = [i for i, line in enumerate(lines) if line.startswith("⋯ Background command")]
    return index


def _turns(lines: list[str]) -> list[str]:
    """The transcript's turns and what followed them: the lines above the prompt (or above
    the no-model note a resumed app shows without a script), without the blank ones at the
    end."""
    end = next(i for i, line in enumerate(lines) if line.startswith(("▌", "▊")))
    shown = lines[:end]
    while shown and not shown[-1]:
        shown.pop()
    return shown


async def test_a_command_waited_on_in_a_later_turn_ends_in_both_turns_rows(
    workspace: Path, tmp_path: Path
) -> None:
    """Started in one turn and waited on in the next: the first turn's row read "✓ Run
    command … · running (pid N)" for ever (only the newest call on the handle, the wait, was
    drawn again). Each turn's row now says how the command ended, live and after resume."""
    start = 'sh = await shell("read line; exit 3")'
    wait = 'await sh.type("go\\n")\nprint(await sh.wait(30))'
    steps = [{"code": start}, {"text": "Started."}, {"code": wait}, {"text": "It ended."}]
    app = vis_app(workspace, write_script(tmp_path, steps))
    async with app.run_test(size=(120, 50)) as pilot:
        await started(app, pilot)
        for request, answer in (("start", "Started."), ("wait", "It ended.")):
            await type_keys(pilot, *request, "enter")
            await until(pilot, lambda a=answer: app.main.transcript.last_answer == a)
            await until(pilot, lambda: not app.main.turn_running)
        await until(pilot, lambda: not any("running (pid" in line for line in _lines(app)))
        app.main.transcript.scroll_home(animate=False)
        live = await settled(pilot, lambda: [ln for ln in _lines(app) if "Run command" in ln])
        session_id = app.session.id
    assert len(live) == 2, live
    assert live[0].startswith("▸ ✗ Run command  read line; exit 3 · exit 3"), live
    assert "waited · exit 3" in live[1], live
    resumed = await seen_after_resume(
        workspace,
        session_id,
        lambda again: [ln for ln in _lines(again) if "Run command" in ln],
        size=(120, 50),
        from_top=True,
    )
    assert resumed == live


async def test_what_a_command_wrote_after_its_turn_shows_with_its_diff_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """A command left running wrote a.txt after its turn: nothing in the transcript said so.
    After its end's line, a note names the file and shows its diff, live and after resume."""
    from .support import seen_after_resume, settled

    (workspace / ".gitignore").write_text("go\n")
    (workspace / "a.txt").write_text("good\n")
    evil = 'await shell("while [ ! -e go ]; do sleep 0.01; done; echo EVIL >> a.txt")'
    app = vis_app(workspace, write_script(tmp_path, [{"code": evil}, {"text": "Started."}]))
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"build", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        (workspace / "go").touch()
        await until(pilot, lambda: any("+EVIL" in line for line in _lines(app)))
        live = await settled(pilot, lambda: _lines(app))
        session_id = app.session.id
    written = [line for line in live if line]
    files = next(i for i, line in enumerate(written) if line.startswith("⋯ Files changed"))
    assert _noted(written) < files, written
    assert "(/undo of turn 1 takes them back) · while [ ! -e go ]" in written[files]
    evil_line = next(i for i, line in enumerate(written) if line.endswith("+EVIL"))
    assert files < written.index("~ a.txt  changed  +1") < evil_line
    resumed = await seen_after_resume(workspace, session_id, _lines, size=(120, 40))
    again = [line for line in resumed if line]
    start = _noted(again)
    assert (
        again[start : start + evil_line + 1 - _noted(written)]
        == written[_noted(written) : evil_line + 1]
    ), "\n".join(resumed)
