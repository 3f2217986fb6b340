"""``/export`` writes the session being shown as a file in the workspace and says where."""

from __future__ import annotations

import os
from pathlib import Path

from pilot_keys import type_keys

from vis_tui.widgets.system_message import SystemMessage

from .support import started, until, vis_app, write_script


def _said(app: object) -> list[str]:
    return [m.source for m in app.main.transcript.query(SystemMessage)]  # type: ignore[attr-defined]


async def test_export_writes_the_session_in_the_workspace_and_says_where(
    workspace: Path, tmp_path: Path
) -> None:
    script = write_script(
        tmp_path,
        [{"text": "Counting.", "code": "print(6 * 7)"}, {"text": "It is <b>42</b>."}],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"count it", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "It is <b>42</b>.")
        await until(pilot, lambda: not app.main.turn_running)
        await type_keys(pilot, *"/export", "enter")
        await until(pilot, lambda: any("Exported this session (md)" in s for s in _said(app)))
        path = workspace / f"vis-session-{app.session.id[:8]}.md"
        assert f"`{path}`" in _said(app)[-1]
        text = path.read_text(encoding="utf-8")
        assert "> count it" in text and "```python\nprint(6 * 7)\n```" in text
        assert "```text\n42\n```" in text and "It is <b>42</b>." in text
        await type_keys(pilot, *"/export html out/s.html", "enter")
        await until(pilot, lambda: "Cannot export" in _said(app)[-1])  # no folder out/
        await type_keys(pilot, *"/export s.html", "enter")
        await until(pilot, lambda: "Exported this session (html)" in _said(app)[-1])
        page = (workspace / "s.html").read_text(encoding="utf-8")
        assert "It is &lt;b&gt;42&lt;/b&gt;." in page


async def test_export_is_not_led_out_of_the_workspace_nor_held_by_a_pipe(
    workspace: Path, tmp_path: Path
) -> None:
    """What a jailed block can leave in the workspace, where /export then writes: a named pipe
    at the default name (its session id is the model's to read) would hold Vis's write (and
    its exit) for ever, and a folder swapped for a link would take the file elsewhere. Each is
    refused and named; nothing is written outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "docs").symlink_to(outside)
    app = vis_app(workspace, write_script(tmp_path, [{"text": "ok"}]))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"hello", "enter")
        await until(pilot, lambda: not app.main.turn_running and app.main.transcript.turns)
        os.mkfifo(workspace / f"vis-session-{app.session.id[:8]}.md")
        await type_keys(pilot, *"/export", "enter")
        await until(pilot, lambda: "Cannot export" in _said(app)[-1])
        assert "a named pipe, not a regular file" in _said(app)[-1]
        await type_keys(pilot, *"/export docs/s.md", "enter")
        await until(pilot, lambda: "docs/s.md" in _said(app)[-1])
        assert "Cannot export" in _said(app)[-1] and "docs is a link to" in _said(app)[-1]
    assert list(outside.iterdir()) == []


async def test_a_persons_command_is_one_entry_in_the_export(workspace: Path) -> None:
    """``!echo``: the app draws its start and the wait for it as one row, but the export
    listed both, "✓ … running (pid N)" then "✓ … exit 0"; now one entry, its final state."""
    app = vis_app(workspace)
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"!echo hello", "enter")
        await until(pilot, lambda: not app.main.turn_running and app.main.transcript.turns)
        await type_keys(pilot, *"/export", "enter")
        await until(pilot, lambda: any("Exported this session (md)" in s for s in _said(app)))
        text = (workspace / f"vis-session-{app.session.id[:8]}.md").read_text(encoding="utf-8")
    commands = [line for line in text.splitlines() if "Run command" in line]
    assert commands == ["- ✓ Run command — echo hello · waited · exit 0"], text


async def test_the_export_says_what_the_person_did_between_turns(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    """``/draft new``, ``/draft discard`` and ``/compact`` were not in the export: a turn
    that ran in a draft later discarded showed its edits as if they had landed. Each is
    said where it happened, before the first turn or after the turn it followed."""
    from .test_drafts import _repo

    edit = 'open("a.txt", "w").write("two\\n")'
    script = [{"code": edit}, {"text": "Edited."}, {"text": "The gist."}]
    repo = _repo(workspace)
    app = vis_app(repo, write_script(tmp_path, script))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"/draft new mine", "enter")
        await until(pilot, lambda: app.main.status_bar.draft == "mine")
        await type_keys(pilot, *"edit it", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "Edited.")
        await until(pilot, lambda: not app.main.turn_running)
        await type_keys(pilot, *"/draft discard", "enter")
        await until(pilot, lambda: app.main.status_bar.draft == "")
        await type_keys(pilot, *"/compact", "enter")
        await until(pilot, lambda: any("Compacted" in s for s in _said(app)))
        await type_keys(pilot, *"/export", "enter")
        await until(pilot, lambda: any("Exported this session (md)" in s for s in _said(app)))
        await type_keys(pilot, *"/export s.html", "enter")
        await until(pilot, lambda: "Exported this session (html)" in _said(app)[-1])
        text = (repo / f"vis-session-{app.session.id[:8]}.md").read_text(encoding="utf-8")
    entered = text.index("**Draft:**\n\n> Entered draft mine")
    turn = text.index("## Turn 1")
    edited = text.index("Files: ~a.txt")
    discarded = text.index("**Draft:**\n\n> Discarded draft mine; the live workspace is as it was")
    compacted = text.index("**/compact:**\n\n> Compacted turn 1: ~")
    assert entered < turn < edited < discarded < compacted, text
    assert "> The gist." in text[compacted:]
    page = (repo / "s.html").read_text(encoding="utf-8")
    assert page.index("Entered draft mine") < page.index("Turn 1") < page.index("Discarded draft")
    assert "<strong>/compact:</strong>\nCompacted turn 1" in page


async def test_the_export_marks_a_draft_a_turn_entered_in_that_turn(
    workspace: Path, tmp_path: Path, jail_off: None
) -> None:
    """The model's ``draft_create`` marks its turn ("✎ Entered draft later"), live and after
    resume; the export had no mark, so the turn's edits read as made in the workspace."""
    from .test_drafts import _repo

    script = [{"code": 'await draft_create("later")'}, {"text": "In."}]
    repo = _repo(workspace)
    app = vis_app(repo, write_script(tmp_path, script))
    async with app.run_test(size=(110, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "In.")
        await until(pilot, lambda: not app.main.turn_running)
        await type_keys(pilot, *"/export", "enter")
        await until(pilot, lambda: any("Exported this session (md)" in s for s in _said(app)))
        text = (repo / f"vis-session-{app.session.id[:8]}.md").read_text(encoding="utf-8")
    turn = text.index("## Turn 1")
    assert turn < text.index("\n✎ Entered draft later") < text.index("\nIn.\n"), text
