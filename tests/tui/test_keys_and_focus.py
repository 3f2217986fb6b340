"""Keys and focus: letters typed on a row reach the prompt, Tab finds the newest Activity,
Ctrl+D quits, pastes fold, and completions stay honest."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pilot_keys import type_keys
from sample_turns import every_block_records, turn_events
from textual import events
from textual.app import App

from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.system_message import SystemMessage
from vis_tui.widgets.transcript import PlainMessage

from .support import started, until, vis_app, write_script


def _notes(app: object) -> list[str]:
    found = app.main.transcript.query(f"{PlainMessage.__name__}, {SystemMessage.__name__}")  # type: ignore[attr-defined]
    return [m.source for m in found]


def type_fast(app: App[Any], text: str) -> None:
    """Every key of ``text`` (``\\n`` is Enter) queued at once, as a fast typist sends them:
    none waits for the one before to be handled."""
    driver = app._driver  # the pilot's headless driver, as Pilot.press uses it
    assert driver is not None
    for char in text:
        key = "enter" if char == "\n" else ("space" if char == " " else char)
        event = events.Key(key, None if char == "\n" else char)
        event.set_sender(app)
        driver.send_message(event)


async def test_letters_typed_fast_on_a_focused_activity_all_reach_the_prompt(
    harness, workspace: Path
) -> None:
    app = harness
    async with app.run_test(size=(100, 40)) as pilot:
        app.feed(turn_events("s", "t1", "fix it", "Done.", every_block_records(str(workspace))))
        await pilot.pause()
        row = app.main.transcript.turns["t1"].rows["a1"]
        row.focus()
        await pilot.pause()
        assert app.focused is row
        app.copy_to_clipboard("kept")
        type_fast(app, "check the result\n")
        await until(pilot, lambda: bool(app.main.queue))
        assert app.main.queue == ["check the result"]  # sent (no session yet: queued)
        assert app.clipboard == "kept" and not row.expanded
        assert app.focused is app.main.prompt and app.main.prompt.text == ""


async def test_j_k_and_c_on_a_focused_activity_are_text(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 40)) as pilot:
        app.feed(turn_events("s", "t1", "fix it", "Done.", every_block_records(str(workspace))))
        await pilot.pause()
        rows = [r for r in app.main.transcript.turns["t1"].rows.values() if r.can_focus]
        rows[1].focus()
        await pilot.pause()
        app.copy_to_clipboard("kept")
        await pilot.press("j", "k", "c")
        assert app.main.prompt.text == "jkc" and app.clipboard == "kept"
        rows[1].focus()
        await pilot.pause()
        await pilot.press("down")
        assert app.focused is rows[2]
        await pilot.press("up", "up")
        assert app.focused is rows[0]
        await pilot.press("space")
        assert isinstance(app.focused, ActivityRow) and app.focused.expanded


async def test_tab_from_the_prompt_goes_to_the_newest_activity(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 30)) as pilot:
        for n in range(1, 4):
            records = every_block_records(str(workspace), turn_id=f"t{n}")
            app.feed(turn_events("s", f"t{n}", f"ask {n}", "Done.", records))
        await pilot.pause()
        transcript = app.main.transcript
        transcript.scroll_end(animate=False)
        await pilot.pause()
        newest = [r for r in transcript.turns["t3"].rows.values() if r.can_focus][-1]
        assert app.focused is app.main.prompt
        await pilot.press("tab")
        assert app.focused is newest
        await pilot.pause()
        assert transcript.scroll_y > transcript.max_scroll_y / 2  # still near the end
        await pilot.press("shift+tab")
        before = [r for r in transcript.turns["t3"].rows.values() if r.can_focus][-2]
        assert app.focused is before


async def test_ctrl_d_on_an_empty_prompt_quits_and_deletes_otherwise(harness) -> None:
    app = harness
    async with app.run_test(size=(100, 30)) as pilot:
        await type_keys(pilot, *"ab", "left", "ctrl+d")
        assert app.main.prompt.text == "a" and app.is_running  # deleted the b
        await pilot.press("backspace", "ctrl+d")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_ctrl_d_on_a_row_quits_as_on_the_empty_prompt(harness, workspace: Path) -> None:
    """With a row focused (opened with Enter), Ctrl+D did nothing: only a letter typed first
    gave the prompt the keys again. It reaches the prompt as a letter does."""
    app = harness
    async with app.run_test(size=(100, 30)) as pilot:
        app.feed(turn_events("s", "t1", "fix it", "Done.", every_block_records(str(workspace))))
        await pilot.pause()
        row = next(r for r in app.main.transcript.turns["t1"].rows.values() if r.can_focus)
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is row and app.is_running
        await pilot.press("ctrl+d")
        await until(pilot, lambda: not app.is_running)
    assert app.return_code == 0


async def test_model_typed_fast_is_checked_against_the_known_models(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    (vis_home / "config.toml").write_text(
        '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = ""\n[models."local/tiny"]\ninput_limit = 8192\n',
        encoding="utf-8",
    )
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        session = app.session
        assert session is not None
        before = session.model.label
        type_fast(app, "/model local/tinyno\n")
        await until(pilot, lambda: "local/tinyno" in " ".join(_notes(app)))
        note = _notes(app)[-1]
        assert "does not know" in note and "`local/tiny`" in note, note
        assert session.model.label == before
        app.main.prompt.text = ""
        await type_keys(pilot, *"/model local/tiny", "enter")
        await until(pilot, lambda: session.model.label == "local/tiny")


async def test_at_completion_offers_text_files_only(workspace: Path, tmp_path: Path) -> None:
    (workspace / "notes.txt").write_text("hello\n", encoding="utf-8")
    (workspace / "notes.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (workspace / "notes.latin1").write_bytes("caf\xe9\n".encode("latin-1"))
    (workspace / "notes.md").write_text("# café\n", encoding="utf-8")
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"see @notes")
        menu = app.main.completion
        await until(pilot, lambda: menu.display and app.main.files is not None)
        labels = sorted(choice.label for choice in menu.choices)
        assert labels == ["@notes.md", "@notes.txt"]


async def test_a_500_line_paste_shows_as_one_folded_entry_and_is_sent_whole(
    workspace: Path, tmp_path: Path
) -> None:
    from vis_core.events import TurnStarted
    from vis_tui.widgets.turn import RequestLine

    from .support import seen_after_resume

    pasted = "\n".join(f"log line {n}" for n in range(1, 501))
    app = vis_app(workspace, write_script(tmp_path, [{"text": "Read it."}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"see: ")
        app.post_message(events.Paste(pasted))  # as the terminal sends it
        await until(pilot, lambda: app.main.prompt.text == "see: [pasted 500 lines #1]")
        await type_keys(pilot, *" why?", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        line = app.main.query_one(RequestLine)
        shown = str(line.render())
        assert "pasted 500 lines" in shown and "see: log line 1" in shown, shown
        assert "log line 250" not in shown and line.size.height <= 3
        # what the person typed after the paste stays in sight (it was folded away with it)
        assert shown.rstrip().endswith("log line 500 why?"), shown
        assert app.core is not None and app.session is not None
        stored = [r.event for r in app.core.history.events(app.session.id)]
        sent = [e.request for e in stored if isinstance(e, TurnStarted)]
        assert sent == [f"see: {pasted} why?"]  # the model has it whole
        await pilot.click(line)
        assert line.expanded and "log line 500" in str(line.render())
        await pilot.press("enter")
        assert not line.expanded
        session_id = app.session.id
    screen = await seen_after_resume(workspace, session_id, lambda a: a.export_screenshot())
    screen = screen.replace("&#160;", " ")
    assert "pasted 500 lines" in screen and "log line 250" not in screen


async def test_a_paste_is_inserted_once(workspace: Path, tmp_path: Path) -> None:
    """Every short paste went in twice ('oneone'): the prompt inserted it through TextArea's
    handler, which Textual then called again. A terminal's CR line ends (tmux sends them)
    count as lines: a 500-line paste of them (the last line ended too, as a file's is) folds
    to one entry 'pasted 500 lines' and is sent with LF ends."""
    from vis_tui.widgets.turn import RequestLine

    app = vis_app(workspace, write_script(tmp_path, [{"text": "Read it."}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"see: ")
        app.post_message(events.Paste("one"))  # as the terminal sends it
        await until(pilot, lambda: app.main.prompt.text != "see: ")
        await pilot.pause()
        assert app.main.prompt.text == "see: one"
        app.post_message(events.Paste("\ralpha\rbeta"))
        await until(pilot, lambda: "beta" in app.main.prompt.text)
        await pilot.pause()
        assert app.main.prompt.text == "see: one\nalpha\nbeta"
        await pilot.press("ctrl+c")  # clears the draft
        await until(pilot, lambda: app.main.prompt.text == "")
        pasted = "".join(f"log line {n}\r" for n in range(1, 501))  # a file's last line ends
        app.post_message(events.Paste(pasted))
        await until(pilot, lambda: app.main.prompt.text == "[pasted 500 lines #1]")
        request = app.main.prompt.expanded(app.main.prompt.text)
        assert request == "".join(f"log line {n}\n" for n in range(1, 501))
        await pilot.press("enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Read it.")
        shown = str(app.main.query_one(RequestLine).render())
        assert "log line 1\n" in shown and "pasted 500 lines" in shown, shown


def test_no_row_of_the_transcript_binds_a_key_that_is_text() -> None:
    """Row keys cannot be text: Enter, Space, arrows, Esc, End; never a letter or a digit."""
    from vis_tui.widgets.activity import SectionView
    from vis_tui.widgets.fold_row import FoldRow
    from vis_tui.widgets.paths import PathChip
    from vis_tui.widgets.stored_turn import StoredTurnView
    from vis_tui.widgets.transcript import Transcript
    from vis_tui.widgets.turn import RequestLine

    owners = (Transcript, ActivityRow, SectionView, FoldRow, PathChip, StoredTurnView, RequestLine)
    for owner in owners:
        for binding in owner.BINDINGS:
            keys = binding[0] if isinstance(binding, tuple) else binding.key
            for key in keys.split(","):
                assert len(key) > 1 and key not in ("minus", "plus", "slash"), (owner, key)


async def test_enter_typed_before_the_menu_caught_up_sends_what_was_typed(
    workspace: Path, vis_home: Path, tmp_path: Path
) -> None:
    """The menu offered local/tiny for "/model local/tin"; "yno⏎" typed fast reached Enter
    before the menu was computed again, and Enter took the stale local/tiny."""
    (vis_home / "config.toml").write_text(
        '[providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = ""\n[models."local/tiny"]\ninput_limit = 8192\n',
        encoding="utf-8",
    )
    app = vis_app(workspace, write_script(tmp_path, [{"text": "hi"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        session = app.session
        assert session is not None
        before = session.model.label
        await type_keys(pilot, *"/model local/tin")
        menu = app.main.completion
        assert menu.selected_choice is not None and menu.selected_choice.text.endswith("tiny")
        type_fast(app, "yno\n")
        await until(pilot, lambda: "local/tinyno" in " ".join(_notes(app)))
        assert "does not know" in _notes(app)[-1] and session.model.label == before
        assert app.main.prompt.text == ""
