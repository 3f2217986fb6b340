"""``@path`` completes workspace files and attaches their cat view; ``!command`` runs in the
workspace as a terminal Activity whose output the model reads next turn."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_core.events import UserContext
from vis_core.model.turn import ContextOrigin
from vis_tui.mentions import mentioned_files, typing_mention, unfound_mentions
from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.system_message import SystemMessage

from .support import started, until, vis_app, write_script


def _files(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("print('hello from app')\n", encoding="utf-8")
    (workspace / "build").mkdir()
    (workspace / "build" / "app.py").write_text("generated\n", encoding="utf-8")
    (workspace / ".gitignore").write_text("build/\n", encoding="utf-8")
    (workspace / "x\x1b]52;c;aGk=\x07[b]app.txt").write_text("hostile name\n", encoding="utf-8")


def _stored(app: object, kind: type) -> list:
    history = app.core.history  # type: ignore[attr-defined]
    session_id = app.session.id  # type: ignore[attr-defined]
    return [row.event for row in history.events(session_id) if isinstance(row.event, kind)]


def test_mentions_name_existing_workspace_files_only(workspace: Path, tmp_path: Path) -> None:
    _files(workspace)
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    (workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    text = "see @src/app.py, @missing.py and @../secret.txt @link.txt mail me@src/app.py"
    assert mentioned_files(text, workspace) == ["src/app.py"]
    assert typing_mention("read @sr", 8) == (5, "sr")
    assert typing_mention("mail me@sr", 10) is None


def test_a_mention_that_names_no_file_is_told(workspace: Path, tmp_path: Path) -> None:
    """A mistyped @path went as plain text without a word (an existing one shows its Read
    file row): the paths that name no workspace file are listed for a toast; a decorator
    (@property) or a handle is not a path."""
    _files(workspace)
    (tmp_path / "secret.txt").write_text("outside", encoding="utf-8")
    text = 'see @src/app.py, @src/apps.py and @../secret.txt, @property, @"my notes.md" @src/'
    assert unfound_mentions(text, workspace) == [
        "@src/apps.py",
        "@../secret.txt",
        '@"my notes.md"',
        "@src/",
    ]
    assert unfound_mentions("mail me@src/x.py or @alice", workspace) == []


async def test_a_mistyped_mention_gets_a_toast_and_the_request_goes(
    workspace: Path, tmp_path: Path
) -> None:
    _files(workspace)
    app = vis_app(workspace, write_script(tmp_path, [{"text": "Which file?"}]))
    async with app.run_test(size=(110, 40), notifications=True) as pilot:
        await started(app, pilot)
        # brackets in a path (a Next.js route, a typo) are text, not Textual markup: the toast
        # read "@app//pag.tsx, @src/x.py", `[slug]` taken for a style and `[/]` for its end
        app.main.prompt.insert("fix @src/apps.py, @app/[slug]/pag.tsx and @src/[/]x.py please")
        await pilot.press("enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Which file?")
        notes = [n.message for n in app._notifications]
        assert any(
            n.startswith("@src/apps.py, @app/[slug]/pag.tsx, @src/[/]x.py name no file")
            for n in notes
        ), notes
        await until(pilot, lambda: len(app.screen.query("Toast")) > 0)
        toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert any("@app/[slug]/pag.tsx, @src/[/]x.py" in toast for toast in toasts), toasts
        assert not _stored(app, UserContext)  # nothing attached


async def test_at_completes_workspace_files_and_attaches_the_cat_view(
    workspace: Path, tmp_path: Path
) -> None:
    _files(workspace)
    script = write_script(tmp_path, [{"text": "It prints a greeting."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"what does @app")
        menu = app.main.completion
        await until(pilot, lambda: menu.display)
        labels = [choice.label for choice in menu.choices]
        assert labels[0] == "@src/app.py" and "@build/app.py" not in labels  # .gitignore
        await type_keys(pilot, *"x", "t")  # the hostile name: shown as text, never as escapes
        await until(pilot, lambda: any("app.txt" in c.label for c in menu.choices))
        screen = app.export_screenshot()
        assert "\x1b]52" not in screen and "\x07" not in screen
        await type_keys(pilot, *["backspace"] * 2)
        await until(pilot, lambda: menu.display and menu.choices[0].label == "@src/app.py")
        await pilot.press("tab")
        assert app.main.prompt.text == "what does @src/app.py "
        await pilot.press("enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "It prints a greeting.")
        request = app.session.conversation.messages[0].text
        assert request.startswith("what does @src/app.py")
        assert "@src/app.py" in request and "1: print('hello from app')" in request
        [attached] = _stored(app, UserContext)
        assert attached.origin is ContextOrigin.FILE and attached.title == "src/app.py"


def test_a_quoted_mention_names_a_file_with_spaces(workspace: Path) -> None:
    (workspace / "my notes.txt").write_text("notes\n", encoding="utf-8")
    (workspace / "a.py").write_text("a\n", encoding="utf-8")
    text = 'read @"my notes.txt", @a.py and @"no such file.txt"'
    assert mentioned_files(text, workspace) == ["my notes.txt", "a.py"]
    assert typing_mention('read @"my no', 12) == (5, "my no")
    assert typing_mention('read @"my notes.txt" ', 21) is None  # closed: nothing to complete


async def test_at_completes_and_attaches_a_file_with_spaces_in_its_name_quoted(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "my notes.txt").write_text("remember the milk\n", encoding="utf-8")
    script = write_script(tmp_path, [{"text": "Milk."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"read @not")
        menu = app.main.completion
        await until(pilot, lambda: menu.display and bool(menu.choices))
        assert menu.choices[0].label == '@"my notes.txt"'
        await pilot.press("tab")
        assert app.main.prompt.text == 'read @"my notes.txt" '
        await type_keys(pilot, *'and @"my n')  # a quote opened by hand completes too
        await until(pilot, lambda: menu.display and menu.choices[0].label == '@"my notes.txt"')
        await pilot.press("tab")
        assert app.main.prompt.text == 'read @"my notes.txt" and @"my notes.txt" '
        await pilot.press("enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Milk.")
        [attached] = _stored(app, UserContext)
        assert attached.origin is ContextOrigin.FILE and attached.title == "my notes.txt"
        assert "remember the milk" in app.session.conversation.messages[0].text


async def test_enter_on_an_open_menu_takes_the_offered_completion(
    workspace: Path, tmp_path: Path
) -> None:
    """``@app`` + Enter with the menu offering ``@src/app.py``: Enter takes it (the letters
    alone attached nothing, silently); Enter again sends. A command typed whole, ``/undo``,
    still runs on the first Enter."""
    _files(workspace)
    script = write_script(tmp_path, [{"text": "Read it."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"look at @sapp")
        menu = app.main.completion
        await until(pilot, lambda: menu.display and bool(menu.choices))
        await pilot.press("enter")
        assert app.main.prompt.text == "look at @src/app.py "
        assert not app.main.transcript.turns  # nothing was sent yet
        await pilot.press("enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Read it.")
        [attached] = _stored(app, UserContext)
        assert attached.title == "src/app.py"
        await type_keys(pilot, *"/undo")
        await until(pilot, lambda: menu.display and bool(menu.choices))
        await pilot.press("enter")
        notes = app.main.transcript.query(SystemMessage)
        await until(pilot, lambda: any("Nothing undone" in m.source for m in notes))
        assert app.main.prompt.text == ""


async def test_bang_runs_a_command_whose_output_the_model_reads_next_turn(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(tmp_path, [{"text": "The command failed with exit 3."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"!echo out-line; echo err-line >&2; exit 3", "enter")
        await until(pilot, lambda: bool(_stored(app, UserContext)))
        await until(pilot, lambda: not app.main.turn_running)
        rows = list(app.main.query(ActivityRow))
        assert rows, "the command shows as an Activity"
        header = str(rows[-1].query_one(".activity-header").render())
        assert "✗" in header and "✓" not in header
        [context] = _stored(app, UserContext)
        assert context.origin is ContextOrigin.SHELL and "[exit 3]" in context.text
        assert "out-line" in context.text and "err-line" in context.text
        assert app.session.title == ""  # a command does not name the session
        await type_keys(pilot, *"what happened?", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer.startswith("The command"))
        users = [m.text for m in app.session.conversation.messages if m.role == "user"]
        assert "out-line" in users[0] and users[-1] == "what happened?"
        await pilot.press("!", "enter")  # nothing to run: said, and no turn starts
        notes = app.main.transcript.query(SystemMessage)
        await until(pilot, lambda: any("Write a command after" in m.source for m in notes))
        assert len(app.main.transcript.turns) == 2


async def test_esc_stops_a_running_bang_command(workspace: Path) -> None:
    app = vis_app(workspace)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"!echo started; sleep 30; touch late.txt", "enter")
        await until(
            pilot, lambda: any("started" in r.as_text() for r in app.main.query(ActivityRow))
        )
        await pilot.press("escape")
        await until(pilot, lambda: not app.main.turn_running)
        turn = next(iter(app.main.transcript.turns.values()))
        assert turn.status == "cancelled"
        assert not _stored(app, UserContext)  # nothing half-run reaches the model
    assert not (workspace / "late.txt").exists()


async def test_a_command_that_fails_inside_vis_says_so_in_the_transcript(workspace: Path) -> None:
    """A command's own error is its result; a failure around it (the store refusing the
    note it keeps, say) ended its worker in silence: the person saw nothing happen."""
    app = vis_app(workspace)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        assert app.core is not None

        async def failing(session: object, text: str) -> object:
            raise OSError(28, "No space left on device")

        app.core.run_command = failing  # type: ignore[method-assign]
        await type_keys(pilot, *"/help", "enter")

        def said() -> list[str]:
            return [m.source for m in app.main.transcript.query(SystemMessage)]

        await until(pilot, lambda: any("/help failed" in text for text in said()))
        assert "OSError: [Errno 28] No space left on device" in said()[-1]
