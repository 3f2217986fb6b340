"""Activity rows: disclosure, sections, handle receipts, running tails, paths and step counts."""

from __future__ import annotations

from pathlib import Path

from pilot_keys import type_keys
from sample_turns import every_block_records, failed_verification_record, record, turn_events
from textual.widgets import Static

from vis_core.events import TurnEnded
from vis_core.model.activity import ActivityPresentation, ActivityState
from vis_core.model.turn import TurnStatus
from vis_tui.app import VisApp
from vis_tui.widgets.activity import ActivityRow, SectionView
from vis_tui.widgets.answer import AnswerView
from vis_tui.widgets.paths import PathChip
from vis_tui.widgets.turn import TurnView

from .support import started, until, vis_app, write_script


def _text(widget: Static) -> str:
    return str(widget.render())


async def test_activity_opens_with_enter_and_click(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 60)) as pilot:
        app.feed(turn_events("s", "t1", "fix it", "Done.", every_block_records(str(workspace))))
        await pilot.pause()
        row = app.main.transcript.turns["t1"].rows["a1"]
        assert not row.query(".activity-body") and not row.expanded
        row.focus()
        await pilot.press("enter")
        body = row.query_one(".activity-body")
        assert row.expanded and body.display
        code = body.query_one(".code-body", Static)
        assert "return run(load())" in code.content.code  # type: ignore[union-attr]
        await pilot.press("enter")
        assert not row.expanded and not body.display
        await pilot.click(row.query_one(".activity-header"))
        assert row.expanded


async def test_section_has_its_own_disclosure(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 60)) as pilot:
        app.feed(turn_events("s", "t1", "review", "", every_block_records(str(workspace))))
        await pilot.pause()
        row = app.main.transcript.turns["t1"].rows["a8"]
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        sections = list(row.query(SectionView))
        assert [s.section.headline for s in sections] == ["Style", "Types"]
        assert not sections[1].expanded
        sections[1].focus()
        await pilot.press("enter")
        await pilot.pause()
        assert sections[1].expanded and not sections[0].expanded and row.expanded
        assert "returns Any" in _text(sections[1].query_one(".text-block", Static))
        await pilot.click(sections[1].query_one(".section-header"))
        assert not sections[1].expanded and row.expanded


async def test_handle_receipts_share_one_row(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 60)) as pilot:
        app.feed(turn_events("s", "t1", "serve", "", every_block_records(str(workspace))))
        await pilot.pause()
        turn = app.main.transcript.turns["t1"]
        row = turn.rows["a9"]
        assert turn.rows["a10"] is row
        assert len(turn.query(ActivityRow)) == 10
        header = _text(row.query_one(".activity-header", Static))
        assert "answered 3 requests" in header and "started on :8000" not in header
        row.focus()
        await pilot.press("enter")
        await pilot.pause()
        receipts = [_text(r) for r in row.query(".receipt").results(Static)]
        assert len(receipts) == 1 and "started on :8000" in receipts[0]


async def test_running_terminal_shows_last_three_lines_collapsed(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 60)) as pilot:
        app.feed(
            turn_events(
                "s",
                "t1",
                "build",
                "",
                every_block_records(str(workspace)),
                status=TurnStatus.RUNNING,
            )
        )
        await pilot.pause()
        row = app.main.transcript.turns["t1"].rows["a11"]
        tail = row.query_one(".activity-tail", Static)
        assert tail.display
        assert _text(tail).split("\n") == [
            "compiling part 3",
            "compiling part 4",
            "compiling part 5",
        ]
        done = record("a11", row.record.presentation, turn_id="t1", tool="shell")
        assert done.state is ActivityState.SUCCEEDED
        row.update_record(done)
        await pilot.pause()
        assert not tail.display


async def test_step_count_line_and_failed_verification(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 60)) as pilot:
        app.feed(turn_events("s", "t1", "fix", "ok", every_block_records(str(workspace))))
        app.feed(
            turn_events(
                "s",
                "t2",
                "test",
                "",
                [failed_verification_record()],
                position=2,
                status=TurnStatus.FAILED,
            )
        )
        await pilot.pause()
        footer = app.main.transcript.turns["t1"].query_one(".turn-footer", Static)
        # a9 and a10 share the server handle: one row, one step
        assert _text(footer) == "1 mutation · 7 observations · 1 verification · 1 external"
        row = app.main.transcript.turns["t2"].rows["f1"]
        assert row.has_class("-failed")
        header = _text(row.query_one(".activity-header", Static))
        assert "failed" in header and "1 failed, 4 passed" in header
        footer2 = _text(app.main.transcript.turns["t2"].query_one(".turn-footer", Static))
        assert footer2 == "1 verification  The turn failed."


async def test_pressed_paths_ask_the_app_to_open_them(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 60)) as pilot:
        app.feed(turn_events("s", "t1", "fix", "", every_block_records(str(workspace))))
        await pilot.pause()
        row = app.main.transcript.turns["t1"].rows["a3"]
        row.focus()
        await pilot.press("enter")
        # opened and laid out (a click lands where the chips are drawn, also under load)
        await until(pilot, lambda: [c.region.width > 0 for c in row.query(PathChip)] == [True] * 2)
        chips = list(row.query(PathChip))
        assert [c.path for c in chips] == [f"{workspace}/src/app.py", f"{workspace}/src/cli.py"]
        assert _text(chips[0]) == "src/app.py"
        chips[1].focus()
        await pilot.press("enter")
        await until(pilot, lambda: len(app.opened) == 1)
        await pilot.click(chips[0])
        await until(pilot, lambda: len(app.opened) == 2)
        assert app.opened == [f"{workspace}/src/cli.py", f"{workspace}/src/app.py"]
        await pilot.click(row.query_one(".activity-header"), offset=(37, 0))
        await until(pilot, lambda: bool(app.links))
        assert app.links == ["src/app.py"]


async def test_streamed_deltas_are_coalesced_into_markdown(harness, workspace: Path) -> None:
    from vis_core.events import AssistantDelta, TurnStarted

    app = harness
    async with app.run_test(size=(100, 40)) as pilot:
        app.feed([TurnStarted("s", turn_id="t1", position=1, request="hi")])
        words = [f"word{n} " for n in range(500)]
        app.feed([AssistantDelta("s", turn_id="t1", text=w) for w in words])
        turn = app.main.transcript.turns["t1"]
        answer = turn.answers[0]
        assert answer.text == "".join(words)  # the text at once; the Markdown catches up
        assert isinstance(answer, AnswerView)
        await until(pilot, lambda: answer.source == "".join(words))
        app.feed([TurnEnded("s", turn_id="t1", status=TurnStatus.CANCELLED)])
        await pilot.pause()
        assert "Cancelled." in _text(turn.query_one(".turn-footer", Static))


async def test_summary_without_presentation_shows_tool_and_error(harness, workspace: Path) -> None:
    app = harness
    async with app.run_test(size=(100, 30)) as pilot:
        bare = record("b1", None, tool="cat", state=ActivityState.FAILED, error="no such file x.py")
        outcome = record("b2", ActivityPresentation("Listed", "", outcome="3 files", aside="0.1 s"))
        app.feed(turn_events("s", "t1", "ls", "", [bare, outcome]))
        await pilot.pause()
        turn: TurnView = app.main.transcript.turns["t1"]
        assert "cat  no such file x.py" in _text(
            turn.rows["b1"].query_one(".activity-header", Static)
        )
        line = _text(turn.rows["b2"].query_one(".activity-header", Static))
        assert line.endswith("Listed  3 files  0.1 s")


def _header_lines(app: VisApp, start: str) -> list[str]:
    """The screen's lines of the Activity header that begins with ``start``."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    lines = ["".join(seg.text for seg in strip).rstrip() for strip in strips]
    first = next(n for n, line in enumerate(lines) if start in line)
    end = next(n for n, line in enumerate(lines) if n > first and not line.strip())
    return lines[first:end]


def _shown_header(app: VisApp) -> list[str] | None:
    try:
        return _header_lines(app, "✗ Read file")
    except StopIteration:  # not drawn yet
        return None


async def test_a_long_error_header_wraps_under_its_text(workspace: Path, tmp_path: Path) -> None:
    """At 80 columns a failed call's header says a long error: its next lines start under
    the headline (a hanging indent), not at the left edge under the marker and ✗, live
    and after resume."""
    missing = "src/" + "/".join(["a-rather-long-folder-name"] * 5) + "/missing.py"
    script = write_script(tmp_path, [{"code": f"await cat({missing!r})"}, {"text": "done"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(80, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "done")
        await pilot.pause()
        live = _header_lines(app, "✗ Read file")
        assert app.session is not None
        session_id = app.session.id
    text_column = live[0].index("Read file")
    assert len(live) >= 3, live  # the error is long enough to wrap twice
    indents = [len(line) - len(line.lstrip()) for line in live[1:]]
    assert min(indents) == text_column, "\n".join(live)  # none left of the headline
    assert "missing.py" in "".join(live)
    resumed_app = vis_app(workspace, script, resume=session_id)  # a model: no model note
    async with resumed_app.run_test(size=(80, 40)) as pilot:
        await started(resumed_app, pilot)
        await until(pilot, lambda: _shown_header(resumed_app) == live)  # once drawn
        resumed = _header_lines(resumed_app, "✗ Read file")
    assert resumed == live


async def test_a_call_that_failed_before_saying_anything_shows_its_error_folded(
    workspace: Path, tmp_path: Path
) -> None:
    """shell() called with an argument it does not take fails before it says anything: its
    row read only '✗ Run command' (and the block's row folds into it), so the error showed
    nowhere until the row was opened. The row's one line now says it, once."""
    code = 'h = await shell("python3 -m http.server", background=True)'
    script = write_script(tmp_path, [{"code": code}, {"text": "done"}])
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 30)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"serve", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "done")
        await pilot.pause()
        (row,) = app.main.query(ActivityRow)
        header = _text(row.query_one(".activity-header", Static))
        assert header.startswith("▸ ✗ Run command  "), header
        assert "unexpected keyword argument 'background'" in header
        row.focus()
        await pilot.press("enter")
        await until(pilot, lambda: row.has_class("-expanded"))
        await pilot.pause()
        assert not row.query(".activity-error")  # said once, in the header


async def test_a_failed_call_s_row_says_an_error_its_summary_does_not(harness) -> None:
    """An MCP call the server failed: its summary is the call's arguments and its error was
    only in the outcome, which the row does not show beside a summary: '✗ MCP demo · fail
    reason=disk full' said nothing of why. The error now follows the summary, once."""
    app = harness
    async with app.run_test(size=(100, 30)) as pilot:
        failed = record(
            "m1",
            ActivityPresentation(
                "MCP demo · fail", "reason=disk full", outcome="error: Error executing tool fail"
            ),
            tool="mcp__demo__fail",
            state=ActivityState.FAILED,
            error="McpToolError: Error executing tool fail",
        )
        app.feed(turn_events("s", "t1", "go", "", [failed]))
        await pilot.pause()
        row = app.main.transcript.turns["t1"].rows["m1"]
        header = _text(row.query_one(".activity-header", Static))
        assert header.endswith("✗ MCP demo · fail  reason=disk full  Error executing tool fail")
        row.focus()
        await pilot.press("enter")
        await until(pilot, lambda: row.has_class("-expanded"))
        await pilot.pause()
        assert not row.query(".activity-error")  # said once, in the header


async def test_a_summary_that_says_the_error_in_short_paths_or_cut_is_not_followed_by_it(
    workspace: Path, tmp_path: Path
) -> None:
    """A failed call's summary says its error with paths shortened (``~/…``, relative to the
    workspace) and cut at 200 characters; the error names the paths whole. The header said
    the error a second time after the summary (six lines of the same words for run_tests
    without pytest in the jail). Now the header says it once, and the opened row shows it
    whole when the summary was cut."""
    far = workspace / "deep" / "missing.py"
    script = write_script(
        tmp_path,
        [
            {"code": f"await cat({str(far)!r})"},
            {"code": f"await patch({str(far)!r}, {'x' * 300!r}, 'y')"},
            {"text": "done"},
        ],
    )
    app = vis_app(workspace, script)
    async with app.run_test(size=(120, 40)) as pilot:
        await started(app, pilot)
        await type_keys(pilot, *"go", "enter")
        await until(pilot, lambda: app.main.transcript.last_answer == "done")
        await pilot.pause()
        read, edit = app.main.query(ActivityRow)
        assert read.record.error and str(far.parent) in read.record.error  # the whole path
        read_header = _text(read.query_one(".activity-header", Static))
        assert read_header.count("does not exist") == 1, read_header
        assert str(workspace) not in read_header  # shown relative
        assert edit.record.error and "x" * 300 in edit.record.error
        edit_header = _text(edit.query_one(".activity-header", Static))
        assert edit_header.endswith("…"), edit_header  # the summary, cut, is the line's end
        assert edit_header.count("version must be") == 1, edit_header
        edit.focus()
        await pilot.press("enter")
        await until(pilot, lambda: edit.has_class("-expanded"))
        await pilot.pause()
        (shown,) = edit.query(".activity-error")
        assert "x" * 300 in " ".join(_text(shown).split())  # the whole error, opened
