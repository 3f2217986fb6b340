"""``/undo`` restores what the last turn changed, says so, and the model is told."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys

from vis_tui.widgets.system_message import SystemMessage

from .support import settled, started, until, vis_app, write_script


def _said(app: object) -> list[str]:
    return [m.source for m in app.main.transcript.query(SystemMessage)]  # type: ignore[attr-defined]


async def test_undo_restores_the_files_the_last_turn_changed(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.txt").write_text("before\n", encoding="utf-8")
    (workspace / "gone.txt").write_text("keep\n", encoding="utf-8")
    code = (
        "from pathlib import Path\n"
        f"root = Path({str(workspace)!r})\n"
        "(root / 'a.txt').write_text('after\\n')\n"
        "(root / 'gone.txt').unlink()\n"
        "sh = await shell('echo made > made.txt')\n"
        "await sh.wait(30)\n"
        "print('done')"
    )
    script = write_script(
        tmp_path, [{"code": code}, {"text": "Changed three files."}, {"text": "Understood."}]
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"change things", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Changed three files.")
        await until(pilot, lambda: not app.main.turn_running)
        assert (workspace / "made.txt").exists()
        await type_keys(pilot, *"/undo", "enter")
        await until(pilot, lambda: any("Undid the file changes of turn 1" in s for s in _said(app)))
        assert (workspace / "a.txt").read_text() == "before\n"
        assert (workspace / "gone.txt").read_text() == "keep\n"
        assert not (workspace / "made.txt").exists()
        note = _said(app)[-1]
        assert "restored `a.txt`" in note and "deleted `made.txt`" in note
        await type_keys(pilot, *"/undo", "enter")
        await until(pilot, lambda: "Nothing undone" in _said(app)[-1])
        await type_keys(pilot, *"what now?", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Understood.")
        request = app.session.conversation.messages[-2].text
        assert request.startswith("[Vis: the person undid the file changes of turn 1]")
        assert "restored a.txt" in request and request.endswith("what now?")


def _screen(app: object) -> list[str]:
    """The transcript's lines from the first request to the prompt."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    lines = ["".join(seg.text for seg in strip).rstrip() for strip in strips]
    start = next(n for n, line in enumerate(lines) if "› change things" in line)
    end = next(n for n, line in enumerate(lines) if "▔" in line or "No model is" in line)
    shown = lines[start:end]
    while shown and not shown[-1].strip():
        shown.pop()
    return shown


async def test_a_resumed_session_shows_the_undo_note_where_it_was_shown_live(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "a.txt").write_text("before\n", encoding="utf-8")
    code = f"from pathlib import Path\nPath({str(workspace)!r}, 'a.txt').write_text('after')"
    script = write_script(
        tmp_path, [{"code": code}, {"text": "Changed a.txt."}, {"text": "Understood."}]
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 50)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"change things", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Changed a.txt.")
        await until(pilot, lambda: not app.main.turn_running)
        await type_keys(pilot, *"/undo", "enter")
        await until(pilot, lambda: any("Undid the file changes" in s for s in _said(app)))
        await type_keys(pilot, *"what now?", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Understood.")
        await until(pilot, lambda: not app.main.turn_running)
        live = await settled(pilot, lambda: _screen(app))
        session_id = app.session.id
    resumed_app = vis_app(workspace, resume=session_id)
    async with resumed_app.run_test(size=(100, 50)) as pilot:
        await started(resumed_app, pilot)
        resumed = await settled(pilot, lambda: _screen(resumed_app))
        copied = resumed_app.main.transcript.as_text()  # what the clipboard gets
        assert copied.index("Changed a.txt.") < copied.index("Undid the file changes")
    shown = "\n".join(resumed)
    assert "Undid the file changes of turn 1" in shown and "restored a.txt" in shown
    # after the turn it undid, before the next one
    assert shown.index("Changed a.txt.") < shown.index("Undid the file") < shown.index("what now")
    assert resumed == live, "\n".join(live) + "\n=====\n" + "\n".join(resumed)


async def test_undo_keeps_what_the_person_did_after_the_turn(
    workspace: Path, tmp_path: Path
) -> None:
    """/undo put the whole workspace back as it was before the turn: the person's edit of a
    file the turn never touched was reverted, a file they made after the turn deleted ("created
    by the turn"), with no copy kept (found by a tester). Now it puts back only what the turn
    changed, and of that only what is still as the turn left it."""
    for name, text in (("app.py", "a = 1\n"), ("other.txt", "keep me\n"), ("both.txt", "b\n")):
        (workspace / name).write_text(text, encoding="utf-8")
    code = (
        "from pathlib import Path\n"
        "Path('app.py').write_text('a = 2\\n')\n"
        "Path('both.txt').write_text('the turn\\n')\n"
        "Path('made.txt').write_text('by the turn\\n')\n"
    )
    script = write_script(tmp_path, [{"code": code}, {"text": "Changed them."}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"change things", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Changed them.")
        await until(pilot, lambda: not app.main.turn_running)
        # the person's work after the turn
        (workspace / "other.txt").write_text("an hour of my work\n", encoding="utf-8")
        (workspace / "mine.txt").write_text("my notes\n", encoding="utf-8")
        (workspace / "both.txt").write_text("my fix of the turn's change\n", encoding="utf-8")
        await type_keys(pilot, *"/undo", "enter")
        await until(pilot, lambda: any("Undid the file changes of turn 1" in s for s in _said(app)))
        note = _said(app)[-1]
    assert (workspace / "app.py").read_text() == "a = 1\n"
    assert not (workspace / "made.txt").exists()
    assert (workspace / "other.txt").read_text() == "an hour of my work\n"
    assert (workspace / "mine.txt").read_text() == "my notes\n"
    assert (workspace / "both.txt").read_text() == "my fix of the turn's change\n"
    assert "restored `app.py`" in note and "deleted `made.txt`" in note
    assert "left `both.txt`: it changed again after the turn" in note
    assert "other.txt" not in note and "mine.txt" not in note


async def test_undo_puts_back_the_links_the_last_turn_changed(
    workspace: Path, tmp_path: Path
) -> None:
    """The turn's links stayed as the turn left them after /undo ("No file differed"): the
    link it made goes, the one it re-pointed and the one it removed come back with their
    targets, the note names each as a link, and the model is told."""
    (workspace / "a.txt").write_text("a\n", encoding="utf-8")
    (workspace / "current").symlink_to("a.txt")
    (workspace / "old").symlink_to("../elsewhere")
    code = (
        "sh = await shell('ln -s a.txt made && ln -sfn b.txt current && rm old')\n"
        "await sh.wait(30)\n"
        "print('done')"
    )
    script = write_script(
        tmp_path, [{"code": code}, {"text": "Changed three links."}, {"text": "Understood."}]
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"change links", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Changed three links.")
        await until(pilot, lambda: not app.main.turn_running)
        assert (workspace / "made").is_symlink() and not (workspace / "old").is_symlink()
        await type_keys(pilot, *"/undo", "enter")
        await until(pilot, lambda: any("Undid the file changes of turn 1" in s for s in _said(app)))
        assert not (workspace / "made").is_symlink()
        assert (workspace / "current").readlink() == Path("a.txt")
        assert (workspace / "old").readlink() == Path("../elsewhere")
        note = _said(app)[-1]
        assert "restored `current` (a link)" in note and "restored `old` (a link)" in note
        assert "deleted `made` (a link created by the turn)" in note
        await type_keys(pilot, *"what now?", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Understood.")
        request = app.session.conversation.messages[-2].text
        assert "restored current (a link)" in request
        assert "deleted made (the turn created this link)" in request
