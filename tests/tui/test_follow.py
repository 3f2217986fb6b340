"""The transcript follows new output while pinned, and keys typed anywhere reach the prompt."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.screens.settings import SettingsScreen
from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.answer import AnswerView
from vis_tui.widgets.block_row import BlockRow

from .support import on_top, settled, started, until, vis_app, write_script

# Code blocks and tables re-render the whole block as they grow: the old 3-line distance
# check left the view on the answer's first screen.
RICH_ANSWER = "\n\n".join(
    f"## Part {n}\n\n```python\ndef part_{n}():\n    return {n}\n```\n\n"
    "| a | b |\n| - | - |\n" + "".join(f"| {n} | {m} |\n" for m in range(6))
    for n in range(12)
)


def _at_bottom(app: object) -> bool:
    transcript = app.main.transcript  # type: ignore[attr-defined]
    return transcript.max_scroll_y > 0 and transcript.scroll_y == transcript.max_scroll_y


def _rendered(app: object) -> bool:
    answers = list(app.main.query(AnswerView))  # type: ignore[attr-defined]
    return bool(answers) and all(a.source == a.text for a in answers)


async def test_a_streamed_answer_with_code_and_tables_stays_in_view(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path,
        [
            {"text": RICH_ANSWER, "chunk": 40, "delay_ms": 1},
            {"text": RICH_ANSWER, "chunk": 40, "delay_ms": 15},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: not app.main.turn_running and _rendered(app))
        await settled(pilot, lambda: (transcript.scroll_y, transcript.max_scroll_y))
        assert _at_bottom(app)

        # Scrolled up during the stream: the view stays where the person put it.
        await type_keys(pilot, *"second", "enter")
        await until(pilot, lambda: len(transcript.turns) == 2 and _rendered(app))
        await until(pilot, lambda: transcript.max_scroll_y > transcript.size.height)
        await pilot.press("pageup")
        held = transcript.scroll_y
        await until(pilot, lambda: not app.main.turn_running and _rendered(app))
        await settled(pilot, lambda: (transcript.scroll_y, transcript.max_scroll_y))
        assert transcript.scroll_y == held < transcript.max_scroll_y

        # Ctrl+End pins it again, and it stays at the end.
        await pilot.press("ctrl+end")
        await settled(pilot, lambda: (transcript.scroll_y, transcript.max_scroll_y))
        assert _at_bottom(app)


async def test_keys_reach_the_prompt_from_rows_and_after_settings(
    workspace: Path, tmp_path: Path
) -> None:
    code = "await shell('true')\nawait shell('false')\nawait ls('.')"
    script = write_script(tmp_path, [{"code": code}, {"text": "done"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"run", "enter")
        await until(pilot, lambda: not app.main.turn_running and _rendered(app))
        rows = list(app.main.query(ActivityRow))
        assert len(rows) == 3
        expandable = [row for row in rows if row.expandable]
        # Tab from the prompt goes to the newest row that opens; ↑/↓ move between them
        # (j/k are text); Esc goes back to the prompt.
        await pilot.press("tab")
        assert app.focused is expandable[-1]
        await pilot.press("up")
        assert app.focused is expandable[-2]
        await pilot.press("down")
        assert app.focused is expandable[-1]
        await pilot.press("escape")
        assert app.focused is app.main.prompt
        # Typed on a row: the letters land in the prompt.
        expandable[0].focus()
        await type_keys(pilot, *"hello")
        assert app.main.prompt.text == "hello" and app.focused is app.main.prompt
        # After Settings closes, typing goes on in the prompt.
        await pilot.press("f2")
        await on_top(pilot, SettingsScreen)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SettingsScreen))
        await type_keys(pilot, *" you")
        assert app.main.prompt.text == "hello you"


async def test_tab_and_shift_tab_reach_a_resumed_turns_rows_in_one_press(
    workspace: Path, tmp_path: Path
) -> None:
    """Tab and Shift+Tab from the prompt of a resumed session focus the newest row that
    opens, nearest the prompt. The first Tab used to scroll to the top and leave the focus on
    the prompt (the stored turn opened on a row that cannot take focus), and Shift+Tab opened
    the turn at its first row, far from the prompt."""
    code = "await cat('notes.txt')\nawait grep('hello', '.')\nsh = await shell('true')\n"
    code += "await sh.wait()"
    script = write_script(tmp_path, [{"text": "Looking.", "code": code}, {"text": "Done."}])
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: not app.main.turn_running and app.main.transcript.turns)
        session_id = app.session.id
    for key, tool in (("tab", "shell.wait"), ("shift+tab", "shell.wait")):
        resumed = vis_app(workspace, resume=session_id)
        async with resumed.run_test(size=(100, 40)) as pilot:
            await started(resumed, pilot)
            await pilot.press(key)
            await until(pilot, lambda app=resumed: isinstance(app.focused, ActivityRow | BlockRow))
            focused = resumed.focused
            if tool is None:
                assert isinstance(focused, BlockRow)
            else:
                assert isinstance(focused, ActivityRow) and focused.record.tool == tool


async def test_a_page_up_while_the_transcript_fits_does_not_stop_the_next_turn_following(
    workspace: Path, tmp_path: Path
) -> None:
    # PageUp with nothing to scroll released the anchor, and a transcript that fit its window
    # could not take it back: the next turn's end stayed below the fold.
    answer = "Here is the plan.\n\n" + "\n".join(
        f"- Line {n} of a long answer." for n in range(1, 41)
    )
    script = write_script(tmp_path, [{"text": answer}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        await pilot.press("pageup")
        await type_keys(pilot, *"explain the plan", "enter")
        await until(pilot, lambda: not app.main.turn_running and _rendered(app))
        await settled(pilot, lambda: (transcript.scroll_y, transcript.max_scroll_y))
        assert _at_bottom(app)


async def test_a_new_session_follows_its_first_turn_after_the_last_one_was_scrolled_up(
    workspace: Path, tmp_path: Path
) -> None:
    # Scrolled up in a long session, then /new: the short new transcript kept the release,
    # and its first long turn stayed at the top.
    answer = "Here is the plan.\n\n" + "\n".join(
        f"- Line {n} of a long answer." for n in range(1, 41)
    )
    script = write_script(tmp_path, [{"text": answer}, {"text": answer}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: not app.main.turn_running and _rendered(app))
        await settled(pilot, lambda: (transcript.scroll_y, transcript.max_scroll_y))
        await pilot.press("pageup")
        await until(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y)
        await type_keys(pilot, *"/new", "enter")
        await until(pilot, lambda: not transcript.turns)
        await type_keys(pilot, *"second", "enter")
        await until(pilot, lambda: len(transcript.turns) == 1)
        await until(pilot, lambda: not app.main.turn_running and _rendered(app))
        await settled(pilot, lambda: (transcript.scroll_y, transcript.max_scroll_y))
        assert _at_bottom(app)


async def test_a_page_up_before_a_running_turn_fills_the_window_leaves_it_followed(
    workspace: Path, tmp_path: Path
) -> None:
    answer = "Here is the plan.\n\n" + "\n".join(
        f"- Line {n} of a long answer." for n in range(1, 41)
    )
    script = write_script(tmp_path, [{"text": answer, "chunk": 8, "delay_ms": 20}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        await type_keys(pilot, *"explain the plan", "enter")
        await until(pilot, lambda: bool(list(app.main.query(AnswerView))))
        assert transcript.max_scroll_y == 0  # it still fits: nothing to scroll
        await pilot.press("pageup")
        await until(pilot, lambda: not app.main.turn_running and _rendered(app))
        await settled(pilot, lambda: (transcript.scroll_y, transcript.max_scroll_y))
        assert _at_bottom(app)
