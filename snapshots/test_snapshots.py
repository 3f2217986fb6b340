"""SVG snapshots of the Vis app (clocks, spinners and cursors frozen by ``VisApp(frozen=True)``)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

from pilot_keys import type_keys
from sample_turns import every_block_records, failed_verification_record, record, turn_events
from settle import drawn
from textual.pilot import Pilot

from vis_core.events import (
    ActivityEnded,
    ActivityStarted,
    AssistantDelta,
    IterationStarted,
    TurnEnded,
    TurnStarted,
)
from vis_core.host import HostOptions
from vis_core.model.activity import (
    ActivityPresentation,
    ActivityState,
    ActivityTerminal,
    ActivityTerminalLine,
    SymbolTag,
)
from vis_core.model.turn import TurnStatus
from vis_tui.app import VisApp
from vis_tui.widgets.activity import ActivityRow, SectionView
from vis_tui.widgets.answer import AnswerView

WORKSPACE = "/tmp/vis-snapshots/project"


def _app(with_model: bool = True) -> VisApp:
    script = Path(WORKSPACE) / "script.json"
    script.write_text('[{"text": "unused"}]', encoding="utf-8")
    options = HostOptions(
        workspace=Path(WORKSPACE),
        provider="scripted" if with_model else None,
        script=script if with_model else None,
    )
    return VisApp(options, frozen=True)


async def _ready(pilot: Pilot[Any]) -> None:
    app = pilot.app
    assert isinstance(app, VisApp)
    await asyncio.wait_for(app.ready.wait(), 20)
    await pilot.pause()


async def _answers_rendered(pilot: Pilot[Any]) -> None:
    """Wait until every streamed answer's Markdown shows its whole text (re-renders are paced)."""

    def rendered() -> bool:
        return all(answer.source == answer.text for answer in pilot.app.query(AnswerView))

    for _ in range(1000):
        if rendered():
            break
        await pilot.pause(0.02)
    await pilot.pause()


def _every_block(expand: bool) -> Any:
    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        app = pilot.app
        assert isinstance(app, VisApp) and app.session is not None
        events = turn_events(
            app.session.id,
            "t1",
            "Make the app verbose and check it",
            "I'll read, patch and test.",
            every_block_records(WORKSPACE),
            status=TurnStatus.RUNNING,
        )
        app.main.feed_events(events)
        await _answers_rendered(pilot)
        if expand:
            for row in app.main.query(ActivityRow):
                row.expanded = True
            await pilot.pause()
            for section in app.main.query(SectionView):
                section.expanded = True
        app.main.prompt.focus()
        await drawn(pilot)
        app.main.transcript.scroll_home(animate=False)
        await drawn(pilot)  # a layout that lands after the scroll is in the picture too

    return run


def test_empty_app_without_a_model(snap_compare: Any) -> None:
    assert snap_compare(_app(with_model=False), terminal_size=(100, 30), run_before=_ready)


def test_turn_with_every_block_collapsed(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=(110, 40), run_before=_every_block(False))


def test_turn_with_every_block_expanded(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=(110, 120), run_before=_every_block(True))


def test_failed_verification(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        app = pilot.app
        assert isinstance(app, VisApp) and app.session is not None
        record = failed_verification_record()
        record = type(record)(**{**record.__dict__, "session_id": app.session.id})
        app.main.feed_events(
            turn_events(
                app.session.id,
                "t2",
                "Run the tests",
                "One test fails.",
                [record],
                status=TurnStatus.FAILED,
            )
        )
        await _answers_rendered(pilot)
        for row in app.main.query(ActivityRow):
            row.expanded = True
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(100, 30), run_before=run)


def test_slash_completion_popup(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        await pilot.press("slash", "s")
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(100, 30), run_before=run)


def test_80_by_24_terminal(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=(80, 24), run_before=_every_block(False))


def test_60_column_terminal(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=(60, 30), run_before=_every_block(False))


def test_progress_line_while_a_command_runs(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        app = pilot.app
        assert isinstance(app, VisApp) and app.session is not None
        sid = app.session.id
        running = record(
            "a1",
            ActivityPresentation("Run command", "pytest -q · running (pid 4242)"),
            session_id=sid,
            state=ActivityState.RUNNING,
            tool="shell",
        )
        app.main.feed_events(
            [
                TurnStarted(sid, turn_id="t1", position=1, request="Run the tests"),
                AssistantDelta(sid, turn_id="t1", text="I'll run the test suite first. " * 8),
                IterationStarted(sid, turn_id="t1", iteration_id="i1", index=1),
                ActivityStarted(sid, activity=running),
            ]
        )
        await _answers_rendered(pilot)
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(100, 20), run_before=run)


def test_failed_command(snap_compare: Any) -> None:
    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        app = pilot.app
        assert isinstance(app, VisApp) and app.session is not None
        sid = app.session.id
        terminal = ActivityTerminal(
            ("make deploy",),
            (ActivityTerminalLine("error: no target 'deploy'", "stderr"),),
            exit=2,
        )
        failed = ActivityPresentation(
            "Run command", "make deploy · exit 2", (terminal,), aside="0.1 s"
        )
        events = turn_events(
            sid,
            "t1",
            "Deploy it",
            "The Makefile has no `deploy` target.",
            [record("a1", failed, session_id=sid, tool="shell")],
        )
        app.main.feed_events(events)
        await _answers_rendered(pilot)
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(100, 20), run_before=run)


def test_bang_command_shows_its_output(snap_compare: Any) -> None:
    """The person's ``!command``: its row is open on what it printed, with no step line."""

    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        app = pilot.app
        assert isinstance(app, VisApp) and app.session is not None
        sid = app.session.id
        terminal = ActivityTerminal(
            ("git status --short",),
            (ActivityTerminalLine(" M src/calc.py"), ActivityTerminalLine("?? notes.txt")),
            exit=0,
        )
        ran = ActivityPresentation(
            "Run command", "git status --short · exit 0", (terminal,), aside="0.1 s"
        )
        command = dataclasses.replace(
            record("a1", ran, session_id=sid, tool="shell", tag=SymbolTag.MUTATION),
            iteration_id=None,  # the person's call, outside any block
        )
        request = "!git status --short"
        app.main.feed_events(
            [
                TurnStarted(sid, turn_id="t1", position=1, request=request),
                ActivityStarted(sid, activity=command),
                ActivityEnded(sid, activity=command),
                TurnEnded(sid, turn_id="t1", status=TurnStatus.COMPLETED),
            ]
        )
        await drawn(pilot)

    assert snap_compare(_app(), terminal_size=(100, 16), run_before=run)


def test_fold_row_opened(snap_compare: Any) -> None:
    """A fold made in the second turn: its quiet row, opened to what left the context."""
    from vis_tui.widgets.fold_row import FoldRow

    gist = "The first turn printed one-1 and one-2."
    script = Path(WORKSPACE) / "fold-script.json"
    script.write_text(
        json.dumps(
            [
                {"code": "print('one-1')"},
                {"code": "print('one-2')"},
                {"text": "answer one"},
                {"code": f"await fold_session('t1', {gist!r})"},
                {"text": "answer two"},
            ]
        ),
        encoding="utf-8",
    )

    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        app = pilot.app
        assert isinstance(app, VisApp)
        for n, request in enumerate(("first", "second"), start=1):
            await type_keys(pilot, *request, "enter")
            for _ in range(1000):
                turns = app.main.transcript.turns.values()
                if len(turns) == n and all(t.status for t in turns):
                    break
                await pilot.pause(0.02)
        row = app.main.transcript.query_one(FoldRow)
        await pilot.click(row)
        for _ in range(500):
            if row.story is not None:
                break
            await pilot.pause(0.02)
        await _answers_rendered(pilot)
        app.screen.set_focus(None)
        await drawn(pilot)

    options = HostOptions(workspace=Path(WORKSPACE), provider="scripted", script=script)
    assert snap_compare(VisApp(options, frozen=True), terminal_size=(100, 34), run_before=run)


RICH_ANSWER = """## What changed

1. The parser keeps **state** between calls.
2. Errors name the file:
   - `src/app.py` for the app
   - `src/cli.py` for the command line

| file | lines | note |
| ---- | ----: | ---- |
| src/app.py | 120 | *parser* |
| src/cli.py | 48 | `main()` |

```python
def parse(text: str) -> list[str]:
    return text.split()
```

> Run the tests again before you commit.
"""


def test_answer_with_a_heading_lists_a_table_and_a_fence(snap_compare: Any) -> None:
    """The one Markdown renderer of answers (live and stored draw alike)."""

    async def run(pilot: Pilot[Any]) -> None:
        await _ready(pilot)
        app = pilot.app
        assert isinstance(app, VisApp) and app.session is not None
        sid = app.session.id
        app.main.feed_events(
            [
                TurnStarted(sid, turn_id="t1", position=1, request="What changed?"),
                *(
                    AssistantDelta(sid, turn_id="t1", text=RICH_ANSWER[n : n + 9])
                    for n in range(0, len(RICH_ANSWER), 9)
                ),
            ]
        )
        await _answers_rendered(pilot)
        app.main.transcript.scroll_home(animate=False)
        await pilot.pause()

    assert snap_compare(_app(), terminal_size=(90, 40), run_before=run)
