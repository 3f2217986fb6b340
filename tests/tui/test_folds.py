"""Folds in the transcript: one quiet row with the gist that opens to show what was folded,
live and after resume; /fork opens a copy of the session up to a turn."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from pilot_keys import type_keys

from vis_core.store import Store
from vis_tui.app import VisApp
from vis_tui.widgets.fold_row import FoldRow
from vis_tui.widgets.stored_turn import StoredTurnView

from .support import seen_after_resume, settled, started, until, vis_app, write_script

GIST = "The first turn printed one-1 and one-2."
TURNS = [
    {"code": "print('one-1')"},
    {"code": "print('one-2')"},
    {"text": "answer one"},
    {"code": f"print(await fold_session('t1', {GIST!r}))"},
    {"text": "answer two"},
]


async def _two_turns(app: VisApp, pilot) -> None:
    for n, request in enumerate(("first", "second"), start=1):
        await type_keys(pilot, *request, "enter")
        await until(
            pilot,
            lambda n=n: (
                len(app.main.transcript.turns) == n
                and all(t.status for t in app.main.transcript.turns.values())
            ),
        )


def _shown(row: FoldRow) -> tuple[str, str, bool]:
    header = str(row.query_one(".fold-header").render())
    story = str(row.query_one(".fold-story").render())
    return header, story, row.query_one(".fold-body").display


async def test_a_fold_is_one_quiet_row_that_opens_to_what_was_folded(
    workspace: Path, tmp_path: Path
) -> None:
    app = vis_app(workspace, write_script(tmp_path, TURNS))
    async with app.run_test(size=(100, 50)) as pilot:
        await started(app, pilot)
        await _two_turns(app, pilot)
        assert app.core is not None
        read, on_main = app.core.folded_story, []

        def reading(*args: Any) -> str:  # the stored events are read off the app's thread
            on_main.append(threading.current_thread() is threading.main_thread())
            return read(*args)

        app.core.folded_story = reading  # type: ignore[method-assign]
        (row,) = app.main.transcript.query(FoldRow)
        header, _, opened = _shown(row)
        assert header == f"▸ ⋯ Folded turn 1 · {GIST}" and not opened
        await pilot.click(row)
        await until(pilot, lambda: row.story is not None)
        await pilot.pause()
        header, story, opened = _shown(row)
        session_id = app.session.id
    assert on_main == [False]
    assert header.startswith("▾ ⋯ Folded turn 1") and opened
    assert story.splitlines() == [
        "Left the model's context (t1); the history keeps it:",
        "",
        "t1 › first",
        "  i1 python_execution",
        "    print('one-1')",
        "    → one-1",
        "  i2 python_execution",
        "    print('one-2')",
        "    → one-2",
        "  answer",
        "    answer one",
    ]

    resumed = vis_app(workspace, resume=session_id)
    async with resumed.run_test(size=(100, 50)) as pilot:
        await started(resumed, pilot)
        view = resumed.main.transcript.turns[next(reversed(resumed.main.transcript.turns))]
        assert isinstance(view, StoredTurnView)
        view.height_at(view.content_size.width, view)
        assert view._cache is not None
        line = next(y for y, hit in view._cache.hits.items() if hit == "fold:0")
        strips = view._cache.strips
        assert "".join(s.text for s in strips[line]).strip() == f"▸ ⋯ Folded turn 1 · {GIST}"
        await pilot.click(view, offset=(4, line))  # the full turn, that fold opened
        await until(pilot, lambda: bool(resumed.main.transcript.query(FoldRow)))
        (row,) = resumed.main.transcript.query(FoldRow)
        await until(pilot, lambda: row.story is not None)
        await pilot.pause()
        header, resumed_story, opened = _shown(row)
    assert header.startswith("▾ ⋯ Folded turn 1") and opened and resumed_story == story


async def test_fork_in_the_app_opens_a_copy_up_to_a_turn(workspace: Path, tmp_path: Path) -> None:
    app = vis_app(workspace, write_script(tmp_path, TURNS))
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        await _two_turns(app, pilot)
        original = app.session.id
        app.main.prompt.insert("/fork 1")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.id != original)
        await until(pilot, lambda: bool(app.main.transcript.turns))
        shown = [t.request for t in app.main.transcript.turns.values()]
        fork = app.session.id
    assert shown == ["first"]
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        row = store.get_session(fork)
        assert row is not None and row.forked_from == original
        assert [t.request for t in store.turns(fork)] == ["first"]
        assert [t.request for t in store.turns(original)] == ["first", "second"]


async def test_fork_says_it_forked_in_the_transcript_a_toast_and_the_status_title(
    workspace: Path, tmp_path: Path
) -> None:
    # The app switched to the fork without a word, and the status bar cut "(fork)" off.
    from vis_tui.widgets.system_message import SystemMessage

    request = "The division test fails when b is zero, please fix div and add a test for it"
    script = write_script(tmp_path, [{"text": "answer one"}, {"text": "answer two"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        for n, text in enumerate((request, "second"), start=1):
            await type_keys(pilot, *text, "enter")
            await until(
                pilot,
                lambda n=n: len([t for t in app.main.transcript.turns.values() if t.status]) == n,
            )
        original = app.session.id
        app.main.prompt.insert("/fork 1")
        await pilot.press("enter")
        await until(pilot, lambda: app.session.id != original)
        notes = lambda: [m.source for m in app.main.transcript.query(SystemMessage)]  # noqa: E731
        await until(pilot, lambda: any("Forked into" in n for n in notes()), seen=notes)
        (note,) = [n for n in notes() if "Forked into" in n]
        assert "1 turn copied" in note and app.session.id[:8] in note
        assert any("Forked into" in (n.title or "") for n in app._notifications)
        await pilot.pause()
        line = app.main.status_bar.render().plain
        assert "The division" in line and "… (fork)" in line, line


def test_the_row_says_who_folded() -> None:
    from vis_tui.notes import FoldInfo, fold_line

    spans = ((1, 0, 0), (2, 0, 0))
    assert fold_line(FoldInfo("t1,t2", "gist", spans, "overflow")) == (
        "▸ ⋯ Folded turns 1–2 by Vis (the request was too long) · gist"
    )
    assert fold_line(FoldInfo("t1,t2", "", spans, "compact"), expanded=True) == (
        "▾ ⋯ Folded turns 1–2 by /compact · no gist"
    )
    long = fold_line(FoldInfo("t1", "word " * 100, spans[:1]))
    assert len(long) < 200 and long.endswith("…")


def test_the_row_says_which_turns_in_words() -> None:
    """It read "Folded t1-t16 by /compact", the model's key for the fold: now the turns (and
    blocks) it folded, as a person counts them."""
    from vis_tui.notes import FoldInfo, fold_line

    whole = tuple((n, 0, 0) for n in (*range(1, 17), 18))
    assert fold_line(FoldInfo("t1-t16,t18", "g", whole, "compact")) == (
        "▸ ⋯ Folded turns 1–16, 18 by /compact · g"
    )
    parts = ((2, 0, 0), (3, 2, 5), (4, 1, 1))
    assert fold_line(FoldInfo("t2,t3/i2-i5,t4/i1", "g", parts)) == (
        "▸ ⋯ Folded turn 2; turn 3, blocks 2–5; turn 4, block 1 · g"
    )
    assert fold_line(FoldInfo("t7", "g", ())) == "▸ ⋯ Folded t7 · g"  # no spans: its key


def _screen_lines(app: VisApp) -> list[str]:
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return ["".join(seg.text for seg in strip).rstrip() for strip in strips]


async def test_a_fold_the_model_made_is_one_row_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    fold = 'r = await fold_session("t1", "the user said hi")\nprint(r)'
    script = [
        {"text": "hello"},
        {"code": fold},
        {"code": 'await fold_session("t9", "no such turn")'},
        {"text": "Folded."},
    ]
    app = vis_app(workspace, write_script(tmp_path, script))
    async with app.run_test(size=(80, 40)) as pilot:
        await started(app, pilot)
        await _two_turns(app, pilot)
        live = await settled(pilot, lambda: _screen_lines(app))
        session_id = app.session.id
    resumed = await seen_after_resume(workspace, session_id, _screen_lines, size=(80, 40))
    for lines in (live, resumed):
        said = [line for line in lines if "1 · the user said hi" in line]
        assert len(said) == 1 and "▸ ⋯ Folded turn 1 · the user said hi" in said[0], said
        # a refused fold made no fold: its call's row says why
        assert any("✗ Fold  t9: " in line for line in lines), "\n".join(lines)


async def test_the_fold_of_compact_goes_after_the_turn_by_its_note_live_and_after_resume(
    workspace: Path, tmp_path: Path
) -> None:
    """/compact after a cancelled turn: its fold row was drawn inside that turn, between its
    block and "Cancelled by the user.", as if the turn had made it. It goes after the turn,
    right above what /compact said, and there again after resume."""
    from .test_resume_fidelity import _lines

    script = [
        {"text": "answer one"},
        {"text": "Waiting.", "code": "import asyncio\nawait asyncio.sleep(30)"},
        {"text": "The gist of both."},
    ]
    app = vis_app(workspace, write_script(tmp_path, script))
    async with app.run_test(size=(100, 60)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"first", "enter")
        await until(pilot, lambda: not app.main.turn_running and bool(app.main.transcript.turns))
        await type_keys(pilot, *"second", "enter")
        await until(pilot, lambda: "running a block" in str(app.main.progress.render()))
        await pilot.press("escape")
        await until(pilot, lambda: not app.main.turn_running)
        await type_keys(pilot, *"/undo 7", "enter")  # a note between the turn and the fold
        await until(pilot, lambda: any("Nothing undone" in line for line in _lines(app)))
        await type_keys(pilot, *"/compact", "enter")
        await until(pilot, lambda: any("Compacted" in line for line in _lines(app)))
        live = await settled(pilot, lambda: _lines(app))
        session_id = app.session.id
    resumed = await seen_after_resume(workspace, session_id, _lines, size=(100, 60))
    written = [line.strip() for line in live if line.strip()]
    end = written.index("Cancelled by the user.")
    assert written[end + 1].endswith("Nothing undone"), written
    fold = written.index("▸ ⋯ Folded turns 1–2 by /compact · The gist of both.")
    assert fold > end + 1 and written[fold + 1].endswith("Compacted turns 1–2"), written
    assert resumed == live, "\n".join(live) + "\n=====\n" + "\n".join(resumed)
