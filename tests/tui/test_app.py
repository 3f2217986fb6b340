"""App features over a real Host: editor, clipboard, sessions picker, paging of old turns."""

from __future__ import annotations

import stat
import threading
from pathlib import Path
from typing import Any

import pytest
from pilot_keys import type_keys
from sample_turns import every_block_records, turn_events
from textual.content import Content
from textual.widgets import Input, OptionList

from vis_tui.screens.sessions import SessionsScreen
from vis_tui.widgets.paths import PathChip
from vis_tui.widgets.welcome import WelcomeHeader

from .support import on_top, started, store_session, until, vis_app, write_script


def _editor(tmp_path: Path) -> tuple[Path, Path]:
    log = tmp_path / "editor.log"
    editor = tmp_path / "fake-editor.sh"
    editor.write_text(f'#!/bin/sh\necho "$@" >> {log}\n', encoding="utf-8")
    editor.chmod(editor.stat().st_mode | stat.S_IEXEC)
    return editor, log


async def test_a_pressed_path_runs_the_editor(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor, log = _editor(tmp_path)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{editor} --wait")
    app = vis_app(workspace)
    async with app.run_test(size=(100, 50)) as pilot:
        await started(app, pilot)
        events = turn_events(
            app.session.id,
            "t1",
            "fix",
            "",
            [
                type(r)(**{**r.__dict__, "session_id": app.session.id})
                for r in every_block_records(str(workspace))
            ],
        )
        app.main.feed_events(events)
        await pilot.pause()
        row = app.main.transcript.turns["t1"].rows["a3"]
        row.expanded = True
        await pilot.pause()
        chip = row.query(PathChip).first()
        chip.focus()
        await pilot.press("enter")
        await until(pilot, log.exists)
        assert log.read_text().split() == ["--wait", f"{workspace}/src/app.py"]
        monkeypatch.delenv("EDITOR")
        await pilot.click(chip)
        await pilot.pause()
        assert len(log.read_text().splitlines()) == 1  # no editor: a note instead of a crash


async def test_a_link_opens_only_a_file_in_the_workspace(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A model's ``[the diff](~/.ssh/config)`` opened that file in the editor (``~`` was
    expanded, and any path outside the workspace taken): a link now opens only a file in the
    workspace, links followed, and says why it opens no other."""
    editor, log = _editor(tmp_path)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(editor))
    (workspace / "src").mkdir(exist_ok=True)
    (workspace / "src" / "a.py").write_text("x = 1\n", encoding="utf-8")
    (workspace / "out").symlink_to(tmp_path)
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        refused = ("~/.ssh/config", "../outside.txt", "/etc/hosts", "out/fake-editor.sh")
        for link in (*refused, "src/a.py"):
            app.action_open_link(link)
        await until(pilot, lambda: log.exists() and len(app._notifications) == len(refused))
        assert log.read_text().split() == [str((workspace / "src" / "a.py").resolve())]
        told = [n.message for n in app._notifications]
        for link in refused:
            assert f"Not opened: {link} (a link opens only a file in the workspace)" in told


async def test_a_chip_opens_only_a_file_in_the_workspace_or_viss_saved_outputs(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failing test's ``open:`` chip named the file its JUnit report gave, which the model's
    code writes: ``/tmp/host-file.txt`` opened in the editor. A chip now opens a file of the
    workspace or of Vis's data folder (saved outputs, attachments), and says why not others."""
    editor, log = _editor(tmp_path)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(editor))
    (workspace / "a.py").write_text("x = 1\n", encoding="utf-8")
    app = vis_app(workspace)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        assert app.core is not None
        saved = app.core.data_dir / "outputs" / "whole.txt"
        saved.parent.mkdir(parents=True, exist_ok=True)
        saved.write_text("all of it\n", encoding="utf-8")
        host_file = tmp_path / "host-file.txt"
        host_file.write_text("private\n", encoding="utf-8")
        for path in ("a.py", str(saved), str(host_file)):  # the editor's return clears notes
            app.action_open_path(path)
        await until(pilot, lambda: log.exists() and len(log.read_text().splitlines()) == 2)
        await until(pilot, lambda: len(app._notifications) > 0)
        opened = [line.strip() for line in log.read_text().splitlines()]
        assert opened == [str((workspace / "a.py").resolve()), str(saved.resolve())]
        told = [n.message for n in app._notifications]
        assert any(m.startswith(f"Not opened: {host_file} (Vis opens only") for m in told), told


async def test_copy_last_answer_activity_and_transcript(workspace: Path, tmp_path: Path) -> None:
    app = vis_app(workspace, write_script(tmp_path, [{"text": "The **answer**."}]))
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"question", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        await until(pilot, lambda: any(t.status for t in app.main.transcript.turns.values()))
        await pilot.press("ctrl+x", "c")
        assert app.clipboard == "The **answer**."
        await pilot.press("ctrl+x", "t")
        await until(pilot, lambda: "> question" in app.clipboard)
        assert "The **answer**." in app.clipboard
        app.main.feed_events(
            turn_events(
                app.session.id,
                "t9",
                "more",
                "",
                [
                    type(r)(**{**r.__dict__, "session_id": app.session.id, "turn_id": "t9"})
                    for r in every_block_records(str(workspace), "t9")[:1]
                ],
                position=2,
            )
        )
        await pilot.pause()
        app.main.transcript.turns["t9"].rows["a1"].focus()
        await pilot.press("ctrl+x", "a")
        assert app.clipboard.startswith("Read src/app.py · 42 lines\ndef main():")


async def test_copy_transcript_copies_the_whole_session_with_its_code(
    workspace: Path, tmp_path: Path
) -> None:
    # Ctrl+X t copied only the mounted turns (41-60 of a resumed 60-turn session), and of
    # a live turn only its request, answer and Activity headlines: no code, no output.
    session_id = store_session(workspace, [f"request {n}" for n in range(1, 61)], title="long")
    script = write_script(
        tmp_path, [{"code": "print('printed by the block')"}, {"text": "It printed."}]
    )
    app = vis_app(workspace, script, resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"run it", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "It printed.")
        await until(pilot, lambda: not app.main.turn_running)
        await pilot.press("ctrl+x", "t")
        await until(pilot, lambda: "> run it" in app.clipboard)
        copied = app.clipboard
        assert all(f"> request {n}\n" in copied for n in (1, 2, 40, 60)), copied[:400]
        assert "answer 1" in copied
        assert "print('printed by the block')" in copied and "printed by the block\n" in copied


async def test_sessions_picker_searches_and_opens(workspace: Path, tmp_path: Path) -> None:
    app = vis_app(workspace, write_script(tmp_path, [{"text": "about penguins"}]))
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"tell me about penguins", "enter")
        await until(pilot, lambda: any(t.status for t in app.main.transcript.turns.values()))
        first = app.session.id
        app.main.prompt.insert("/new")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.id != first)
        assert not app.main.transcript.turns
        app.main.prompt.insert("/sessions")
        await pilot.press("enter")
        await on_top(pilot, SessionsScreen)
        listing = app.screen.query_one(OptionList)
        marked = {
            str(option.id): "● open now" in str(option.prompt)
            for option in (listing.get_option_at_index(i) for i in range(listing.option_count))
        }
        assert marked[first] is False and marked[app.session.id] is True  # this one is marked
        await type_keys(pilot, *"penguins")
        await until(pilot, lambda: "penguins" in str(listing.get_option_at_index(0).prompt))
        # the snippet shows the match in bold, not between the ** marks the model reads
        prompt = listing.get_option_at_index(0).prompt
        assert isinstance(prompt, Content)
        assert prompt.plain.endswith("\n  tell me about penguins"), prompt.plain
        bold = [prompt.plain[s.start : s.end] for s in prompt.spans if "bold" in str(s.style)]
        assert "penguins" in bold
        await pilot.press("enter")
        await until(pilot, lambda: app.session.id == first)
        assert [t.request for t in app.main.transcript.turns.values()] == ["tell me about penguins"]


async def test_the_sessions_search_runs_beside_the_keys_and_enter_opens_what_was_typed(
    workspace: Path,
) -> None:
    """A search over months of sessions takes 0.1-0.3 s, and it ran on the app's loop at
    every key: typing waited. It runs in a thread now; keys go on meanwhile, and Enter
    pressed before the result comes opens the first session it finds (an unreadable store
    is said in the list, and the app goes on)."""
    penguins = store_session(workspace, ["about penguins"], title="about penguins")
    store_session(workspace, ["about owls"], title="about owls")
    app = vis_app(workspace, resume="")
    async with app.run_test(size=(100, 30)) as pilot:
        await on_top(pilot, SessionsScreen)
        assert app.core is not None
        search, release = app.core.search_sessions, threading.Event()
        threads: list[bool] = []

        def held(query: str) -> Any:
            threads.append(threading.current_thread() is threading.main_thread())
            if query == "owls":
                raise ValueError("the database disk image is malformed")
            release.wait(20)
            return search(query)

        app.core.search_sessions = held  # type: ignore[method-assign]
        screen = app.screen
        listing = screen.query_one(OptionList)
        await type_keys(pilot, *"owls")
        await until(
            pilot, lambda: "The search failed" in str(listing.get_option_at_index(0).prompt)
        )
        assert "malformed" in str(listing.get_option_at_index(0).prompt)
        for _ in "owls":
            await pilot.press("backspace")
        await type_keys(pilot, *"penguins", "enter")
        await pilot.pause()
        assert app.screen is screen and screen.query_one(Input).value == "penguins"
        release.set()
        await started(app, pilot)
        assert app.session.id == penguins
        assert threads and not any(threads)


async def test_resume_without_an_id_lets_the_person_pick(workspace: Path) -> None:
    penguins = store_session(workspace, ["about penguins"], title="about penguins")
    store_session(workspace, ["about owls"], title="about owls")
    app = vis_app(workspace, resume="")
    async with app.run_test(size=(100, 30)) as pilot:
        await on_top(pilot, SessionsScreen)
        await type_keys(pilot, *"penguins")
        await pilot.pause()
        await pilot.press("enter")
        await started(app, pilot)
        assert app.session.id == penguins
        assert [t.request for t in app.main.transcript.turns.values()] == ["about penguins"]


async def test_resume_picker_closed_starts_a_new_session(workspace: Path) -> None:
    known = [store_session(workspace, ["about penguins"], title="about penguins")]
    app = vis_app(workspace, resume="")
    async with app.run_test(size=(100, 30)) as pilot:
        await on_top(pilot, SessionsScreen)
        await pilot.press("escape")
        await started(app, pilot)
        assert app.session.id not in known and not app.main.transcript.turns
        assert len(app.main.transcript.query(WelcomeHeader)) == 1  # the new session's


async def test_older_turns_load_as_the_person_scrolls_up(workspace: Path) -> None:
    session_id = store_session(workspace, [f"request {n}" for n in range(1, 46)], title="long")
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        assert [t.position for t in transcript.turns.values()] == list(range(26, 46))
        assert transcript.has_older
        for _ in range(200):
            if len(transcript.turns) == 45:
                break
            await pilot.press("pageup")
        assert sorted(t.position for t in transcript.turns.values()) == list(range(1, 46))
        assert not transcript.has_older
