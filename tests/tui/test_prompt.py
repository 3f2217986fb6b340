"""The prompt against a real Host: history, commands, queue, cancel, Ctrl+C, completion."""

from __future__ import annotations

from pathlib import Path

import pytest
from pilot_keys import type_keys
from textual.widgets import Static

from vis_core.model.turn import TurnStatus
from vis_tui.screens.help import HelpScreen
from vis_tui.screens.settings import SettingsScreen
from vis_tui.widgets.system_message import SystemMessage
from vis_tui.widgets.transcript import PlainMessage

from .support import on_top, started, until, vis_app, write_script


def _prompts(app) -> list[str]:
    return app.core.prompts(app.session.id)


def _notes(app) -> list[str]:
    return [m.source for m in app.main.transcript.query(SystemMessage)]  # type: ignore[attr-defined]


def _ended(app, count: int):
    return lambda: sum(1 for t in app.main.transcript.turns.values() if t.status) >= count


async def test_history_recall_restores_the_draft(workspace: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"text": "one"}, {"text": "two"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        prompt = app.main.prompt
        for text in ("first", "second"):
            await type_keys(pilot, *text, "enter")
            await until(pilot, lambda: not app.main.turn_running and prompt.text == "")
        await until(pilot, _ended(app, 2))
        assert _prompts(app) == ["first", "second"]
        await type_keys(pilot, *"dra", "shift+enter", *"ft")
        assert prompt.text == "dra\nft"
        prompt.move_cursor((0, 0))
        await pilot.press("up")
        assert prompt.text == "second"
        await pilot.press("up", "up")
        assert prompt.text == "first"
        await pilot.press("down")
        assert prompt.text == "second"
        await pilot.press("down")
        assert prompt.text == "dra\nft"


async def test_history_is_read_from_the_store_when_continuing(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path, [{"text": "one"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"remember me", "enter")
        await until(pilot, _ended(app, 1))
        first_id = app.session.id
    again = vis_app(workspace, write_script(tmp_path, [{"text": "x"}]), continue_=True)
    async with again.run_test(size=(100, 30)) as pilot:
        await started(again, pilot)
        assert again.session.id == first_id
        stored = list(again.main.transcript.turns.values())
        assert [t.request for t in stored] == ["remember me"]
        assert stored[0].last_answer == "one"
        await pilot.press("up")
        assert again.main.prompt.text == "remember me"


async def test_continuing_with_no_earlier_session_says_it_started_a_new_one(
    workspace: Path, tmp_path: Path
) -> None:
    """The note was added before the new session was attached, which cleared it: `vis
    --continue` in a fresh workspace started a new session without a word."""
    app = vis_app(workspace, write_script(tmp_path, [{"text": "x"}]), continue_=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        note = "No earlier session in this workspace; started a new one."
        await until(pilot, lambda: note in _notes(app))


async def test_saveable_commands_are_recorded_and_control_commands_not(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        for text in ("/goal ship the release", "/context", "/goal ship the release", "/nope"):
            app.main.prompt.insert(text)
            await pilot.press("enter")
            await pilot.pause()
        await until(
            pilot,
            lambda: any(
                "Unknown command" in m.source for m in app.main.transcript.query(SystemMessage)
            ),
        )
        assert _prompts(app) == ["/goal ship the release"]
        # the unknown one is not lost: back in the prompt and under ↑, not in saved history
        assert app.main.prompt.recall == ["/goal ship the release", "/nope"]
        assert app.main.prompt.text == "/nope"


async def test_a_request_starting_with_a_path_is_sent_and_titles_the_session(
    workspace: Path, tmp_path: Path
) -> None:
    # It was refused as "Unknown command /tmp/x.py:." and the text was gone.
    request = "/tmp/x.py: why does this fail"
    app = vis_app(workspace, write_script(tmp_path, [{"text": "It divides by zero."}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *request, "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "It divides by zero.")
        (turn,) = app.main.transcript.turns.values()
        assert turn.request == request
        assert app.session is not None and app.session.title.startswith("/tmp/x.py: why")
        assert "Unknown command" not in " ".join(_notes(app))


async def test_messages_typed_during_a_turn_are_queued(workspace: Path, tmp_path: Path) -> None:
    slow = {"text": "a" * 1000, "chunk": 1, "delay_ms": 10}
    script = write_script(tmp_path, [slow, {"text": "done two"}, {"text": "done three"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"one", "enter")
        await until(pilot, lambda: app.main.turn_running)
        await type_keys(pilot, *"two", "enter", *"three", "enter")
        assert app.main.queue == ["two", "three"]
        assert app.main.status_bar.queued == 2
        await pilot.press("up")
        assert app.main.prompt.text == "three" and app.main.queue == ["two"]
        await pilot.press("enter")
        assert app.main.queue == ["two", "three"]
        await pilot.press("escape")  # the long first turn ends; the queue waits for Enter
        await until(pilot, lambda: not app.main.turn_running)
        assert app.main.queue == ["two", "three"] and app.main.queue_paused
        await pilot.press("enter")  # then it is sent in order
        await until(pilot, _ended(app, 3))
        requests = [t.request for t in app.main.transcript.turns.values()]
        assert requests == ["one", "two", "three"]
        assert app.main.status_bar.queued == 0


async def test_escape_cancels_a_long_turn(workspace: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"text": "b" * 400, "chunk": 1, "delay_ms": 20}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"long", "enter")
        await until(pilot, lambda: any(t.answers for t in app.main.transcript.turns.values()))
        await pilot.press("escape")
        await until(pilot, _ended(app, 1))
        turn = next(iter(app.main.transcript.turns.values()))
        assert turn.status is TurnStatus.CANCELLED
        # said once, not "Cancelled. cancelled by the user"
        assert str(turn.query_one(".turn-footer", Static).render()) == "Cancelled by the user."


async def test_ctrl_c_clears_then_cancels_then_quits(workspace: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, [{"text": "c" * 400, "chunk": 1, "delay_ms": 20}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"draft", "ctrl+c")
        assert app.main.prompt.text == "" and app.is_running
        await pilot.press("up")  # the cleared draft is not lost
        assert app.main.prompt.text == "draft"
        await pilot.press("ctrl+c")
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: app.main.turn_running)
        await pilot.press("ctrl+c")
        await until(pilot, _ended(app, 1))
        assert next(iter(app.main.transcript.turns.values())).status is TurnStatus.CANCELLED
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running  # armed: a second press quits
        await type_keys(pilot, *"new", "ctrl+c")  # clears the draft, and disarms
        assert app.main.prompt.text == ""
        # on a screen above the main one, the same two presses: on Settings Textual's own
        # Ctrl+C said to press Ctrl+Q, on a modal one (F1's keys) Ctrl+C did nothing at all
        await pilot.press("f2")
        await on_top(pilot, SettingsScreen)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running  # armed
        await pilot.press("escape", "f1")
        await on_top(pilot, HelpScreen)
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0


async def test_slash_opens_completion_and_tab_completes(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await pilot.press("slash")
        menu = app.main.completion
        assert menu.display and menu.option_count == len(app.core.commands())
        await pilot.press("s", "e")
        assert [c.text for c in menu.choices][:2] == ["/sessions ", "/settings "]
        await pilot.press("down", "tab")
        assert app.main.prompt.text == "/settings " and not menu.display
        await pilot.press("ctrl+c", "slash", "s", "t", "n", "g")  # s-t-tin-g-s, fuzzy
        assert menu.choices[0].text == "/settings "
        await pilot.press("ctrl+c", "slash", "h", "escape")
        assert not menu.display and app.main.prompt.text == "/h"


async def test_f1_and_ctrl_x_question_mark_show_every_key(workspace: Path) -> None:
    from vis_tui.keys import KEYS

    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        table = app.screen.query_one("#help-keys")
        names = list(table.query(".help-name").results(Static))
        whats = list(table.query(".help-what").results(Static))
        assert [str(n.render()) for n in names] == [k.keys for k in KEYS]
        assert all(k.what in str(w.render()) for k, w in zip(KEYS, whats, strict=True))
        # two columns: what a key does wraps in its own column, right of every key
        column = {w.region.x for w in whats}
        assert len(column) == 1 and max(n.region.right for n in names) < column.pop()
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("ctrl+x", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        assert app.main.prompt.has_focus


async def test_without_a_model_the_transcript_says_how_to_configure_one(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        messages = [m.source for m in app.main.transcript.query(PlainMessage)]
        assert messages and messages[0] == app.core.model_problem
        assert app.main.status_bar.model == "no model"
        # a request fails, and says so in a line: the whole help is the note above it
        await type_keys(pilot, *"hello", "enter")
        turn_ended = lambda: not app.main.turn_running and app.main.transcript.turns  # noqa: E731
        await until(pilot, turn_ended)
        await pilot.pause()
        (turn,) = app.main.transcript.turns.values()
        footer = str(turn.query_one(".turn-footer", Static).render())
        assert footer == "The turn failed: no model is configured: /login sets one up.", footer


async def test_the_first_request_names_the_session_in_the_status_bar(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path, [{"text": "on it"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.main.status_bar.title == ""
        await type_keys(pilot, *"Fix the login test", "enter")
        await until(pilot, _ended(app, 1))
        assert app.main.status_bar.title == "Fix the login test"


async def test_a_long_title_is_cut_in_the_status_bar_not_dropped(
    workspace: Path, tmp_path: Path
) -> None:
    """A title too long for the line is cut with an ellipsis; the line keeps its full form
    (workspace path, spaced separators) instead of dropping the title altogether."""
    script = write_script(tmp_path, [{"text": "on it"}])
    app = vis_app(workspace, script)
    request = "The division test fails when b is zero, please fix div and add a test for it"
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *request, "enter")
        await until(pilot, _ended(app, 1))
        await pilot.pause()
        line = app.main.status_bar.render().plain
        assert "The division test" in line and "…" in line
        assert " │ " in line
        assert " tokens" in line  # the full form, not the compact one
        assert len(line) <= app.main.status_bar.size.width - 2


async def test_a_narrow_status_bar_keeps_what_the_session_is_doing(
    workspace: Path, tmp_path: Path
) -> None:
    """Where even the compact line is too long (a side panel beside an 80-column terminal),
    its end was cut off, and with it "running" / "ready" and the queue. The cost, tokens,
    context share and model go first, in that order; the state stays."""
    script = write_script(tmp_path, [{"text": "on it"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(40, 20)) as pilot:
        await started(app, pilot)
        line = app.main.status_bar.render().plain
        assert line.endswith("○ ready"), line
        assert "$0.00" not in line  # the cost went first
        assert len(line) <= app.main.status_bar.size.width - 2


async def test_a_draft_says_so_in_a_narrow_status_bar_and_help_explains_its_sign(
    workspace: Path, jail_off: None
) -> None:
    """In a draft the compact bar showed "✎0", its label and any word left out, and F1 did
    not say what the sign meant: it reads "✎ draft · 0 files" now, and help lists the bar's
    signs."""
    from vis_tui.widgets.status import SIGNS

    app = vis_app(workspace)
    async with app.run_test(size=(60, 20)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/draft new mine", "enter")
        await until(pilot, lambda: app.main.status_bar.draft == "mine")
        await pilot.pause()
        line = app.main.status_bar.render().plain
        assert "│✎ draft · 0 files│" in line, line
        assert len(line) <= app.main.status_bar.size.width - 2
        await pilot.press("f1")
        assert isinstance(app.screen, HelpScreen)
        signs = app.screen.query_one("#help-signs")
        shown = [str(cell.render()) for cell in signs.query(Static)]
        assert shown[:2] == list(SIGNS[0]) and "✎ draft LABEL · N files" in shown[0]
    app = vis_app(workspace, resume=app.session.id)  # type: ignore[union-attr]
    async with app.run_test(size=(160, 20)) as pilot:
        await started(app, pilot)
        await until(pilot, lambda: app.main.status_bar.draft == "mine")
        assert " │ ✎ draft mine · 0 files │ " in app.main.status_bar.render().plain


async def test_a_narrow_screen_keeps_esc_close_and_f1_keys(workspace: Path) -> None:
    """At 60 columns the settings footer lost "Esc close" and the empty prompt "F1 keys":
    cut at the end, the hints a newcomer needs most went first. Less needed ones go now."""
    app = vis_app(workspace)
    async with app.run_test(size=(60, 20)) as pilot:
        await started(app, pilot)
        prompt = app.main.prompt
        assert prompt.placeholder == "Ask Vis…  (Enter sends · / commands · F1 keys)"
        assert len(prompt.placeholder) <= prompt.content_size.width
        await pilot.press("f2")
        await until(pilot, lambda: bool(app.screen.query("#settings-hints")))
        await pilot.pause()
        hints = app.screen.query_one("#settings-hints", Static)
        assert str(hints.render()) == "↑↓ move · Space/Enter change · / search · Esc close"
    wide = vis_app(workspace)
    async with wide.run_test(size=(100, 30)) as pilot:
        await started(wide, pilot)
        assert wide.main.prompt.placeholder == (
            "Ask Vis…  (Enter sends · Shift+Enter newline · / commands · F1 keys)"
        )


async def test_summarize_steps_setting_shows_or_hides_the_step_line(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (workspace / "a.txt").write_text("hello\n", encoding="utf-8")
    turn = [{"code": 'print(await cat("a.txt"))'}, {"text": "It says hello."}]
    for setting, expected in (("true", True), ("false", False)):
        (vis_home / "config.toml").write_text(f"summarize_steps = {setting}\n", encoding="utf-8")
        app = vis_app(workspace, write_script(tmp_path, turn))
        async with app.run_test(size=(100, 30)) as pilot:
            await started(app, pilot)
            await type_keys(pilot, *"read a.txt", "enter")
            await until(pilot, _ended(app, 1))
            await pilot.pause()
            view = next(iter(app.main.transcript.turns.values()))
            footer = view._footer.render() if view._footer is not None else ""
            assert ("1 observation" in str(footer)) is expected


def test_the_key_list_names_every_binding() -> None:
    """F1 lists F2 and every binding of the app, the main screen, the transcript and rows."""
    from vis_tui.app import VisApp
    from vis_tui.keys import KEYS
    from vis_tui.screens.form import FormScreen
    from vis_tui.screens.main import MainScreen
    from vis_tui.widgets.activity import ActivityRow
    from vis_tui.widgets.transcript import Transcript

    names = {
        "escape": "Esc",
        "up": "↑",
        "down": "↓",
        "enter": "Enter",
        "space": "Space",
        "pageup": "PageUp",
        "pagedown": "PageDown",
        "ctrl+home": "Ctrl+Home",
        "ctrl+end": "Ctrl+End",
        "ctrl+c": "Ctrl+C",
        "ctrl+x": "Ctrl+X",
        "ctrl+s": "Ctrl+S",
        "ctrl+g": "Ctrl+G",
        "end": "End",
        "f1": "F1",
        "f2": "F2",
        "f3": "F3",
    }
    listed = " ".join(k.keys for k in KEYS)
    owners = (VisApp, MainScreen, Transcript, ActivityRow, FormScreen)
    for owner in owners:
        for binding in owner.BINDINGS:
            keys = binding[0] if isinstance(binding, tuple) else binding.key
            for key in keys.split(","):
                shown = names.get(key, key)
                assert shown in listed, f"{owner.__name__}: {key} is not in the F1 list"


async def test_ctrl_g_edits_the_prompt_in_the_editor(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = tmp_path / "editor.sh"
    seen = tmp_path / "seen.txt"
    editor.write_text(f'#!/bin/sh\ncp "$1" {seen}\nprintf "fix the bug\\nin app.py" > "$1"\n')
    editor.chmod(0o755)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(editor))
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"draft", "ctrl+g")
        await until(pilot, lambda: app.main.prompt.text == "fix the bug\nin app.py")
        assert seen.read_text() == "draft"
        assert app.main.prompt.cursor_location == (1, 9)
        monkeypatch.delenv("EDITOR")
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert app.main.prompt.text == "fix the bug\nin app.py"  # no editor: a note, no loss


def _menu_lines(app: object, menu: object) -> list[str]:
    """The completion menu's lines as drawn, inside its border."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    box = menu.content_region  # type: ignore[attr-defined]
    lines = ["".join(seg.text for seg in strip) for strip in strips]
    return [line[box.x : box.right].rstrip() for line in lines[box.y : box.bottom]]


@pytest.mark.parametrize("width", [80, 120])
async def test_the_slash_menu_shows_usages_and_descriptions_in_two_columns(
    workspace: Path, width: int
) -> None:
    """A usage of 28 characters or more ran into its description (``/export [md|html|json]
    [PATH]Write this…``) and a wrapped description went on from the menu's first column;
    each description now starts in its own column, two spaces or more past its usage (a
    longer usage has its line), and wraps under that column."""
    from vis_tui.widgets.completion import DESCRIPTION_COLUMN

    app = vis_app(workspace)
    async with app.run_test(size=(width, 30)) as pilot:
        await started(app, pilot)
        menu = app.main.completion
        for typed in ("d", "ex", "co"):
            await pilot.press("ctrl+c", "slash", *typed)
            await until(pilot, lambda s="/" + typed: menu.display and menu.source == s)
            await pilot.pause()
            lines = _menu_lines(app, menu)
            shown = "\n".join(lines)
            said = [c for c in menu.choices if c.doc][:3]  # those the menu shows whole
            assert said, shown
            for choice in said:
                (at,) = [n for n, line in enumerate(lines) if line.startswith(choice.label)]
                rest = lines[at][len(choice.label) :]
                doc = choice.doc.split()[0]
                if rest:  # the description on the usage's line
                    assert rest.startswith("  "), shown
                else:  # on the next one
                    at += 1
                assert lines[at][DESCRIPTION_COLUMN:].startswith(doc), shown
            for line in lines:  # a usage, or a description in its column
                if line.strip() and not line.startswith("/"):
                    assert not line[:DESCRIPTION_COLUMN].strip(), shown


async def test_a_paste_entry_is_one_unit_deleted_whole_or_kept_and_said(
    workspace: Path, tmp_path: Path
) -> None:
    # Backspace cut "]" off "[pasted 5,000 lines #1]" and the request went out without the
    # paste: the transcript showed the entry's remains, and the model never got the log.
    from textual import events

    from vis_core.events import TurnStarted

    log = "\n".join(f"log line {n}" for n in range(1, 5001))
    app = vis_app(workspace, write_script(tmp_path, [{"text": "Read it."}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        prompt = app.main.prompt
        app.post_message(events.Paste(log))
        await until(pilot, lambda: prompt.text == "[pasted 5,000 lines #1]")
        await pilot.press("backspace")  # at its end: the whole entry goes
        assert prompt.text == ""
        await pilot.press("ctrl+z")  # and comes back, still the paste
        await until(pilot, lambda: prompt.text == "[pasted 5,000 lines #1]")
        prompt.move_cursor((0, len("[pasted 5,000")))
        await pilot.press("delete")  # inside it: the whole entry goes too
        assert prompt.text == ""
        await pilot.press("ctrl+z")
        await until(pilot, lambda: prompt.text == "[pasted 5,000 lines #1]")

        # edited inside (typed into it): Enter keeps it, says why, and sends nothing
        prompt.move_cursor((0, len("[pasted 5,000 lines #1")))
        await type_keys(pilot, *" what is wrong here?", "enter")
        await until(
            pilot, lambda: any("Paste not sent" in (n.title or "") for n in app._notifications)
        )
        assert prompt.text == "[pasted 5,000 lines #1 what is wrong here?]"
        assert not app.main.transcript.turns

        # put back as it was: sent whole
        prompt.text = "[pasted 5,000 lines #1] what is wrong here?"
        prompt.move_cursor((0, len(prompt.text)))
        await pilot.press("enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Read it.")
        assert app.core is not None and app.session is not None
        stored = [r.event for r in app.core.history.events(app.session.id)]
        assert [e.request for e in stored if isinstance(e, TurnStarted)] == [
            f"{log} what is wrong here?"
        ]
