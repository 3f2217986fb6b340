"""Stored turns are drawn as one widget that looks like the full turn and opens into it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sample_turns import every_block_records, turn_events

from vis_core.events import SessionCreated
from vis_core.model.turn import TurnStatus
from vis_tui.widgets.activity import ActivityRow
from vis_tui.widgets.stored_turn import StoredTurnView
from vis_tui.widgets.turn import TurnView

from .support import started, until, vis_app


def _store(workspace: Path) -> str:
    from vis_core.store import Store

    store = Store(Path(os.environ["VIS_HOME"]) / "vis.db")
    row = store.create_session(workspace.resolve(), workspace.resolve(), title="stored")
    store.append(SessionCreated(row.id, title="stored", workspace=str(workspace)))
    turns = [
        (
            "t1",
            "a request long enough to wrap " * 5,
            "Just **text**, no work.",
            0,
            TurnStatus.COMPLETED,
        ),
        ("t2", "read and patch", "Done: `src/app.py` patched.", 5, TurnStatus.COMPLETED),
        ("t3", "stopped", "", 2, TurnStatus.CANCELLED),
        ("t4", "failed", "Partial answer.", 3, TurnStatus.FAILED),
    ]
    for n, (turn_id, request, answer, count, status) in enumerate(turns, start=1):
        records = [
            type(r)(**{**r.__dict__, "id": f"{turn_id}-{r.id}", "session_id": row.id})
            for r in every_block_records(str(workspace), turn_id)[:count]
        ]
        store.append_many(
            turn_events(row.id, turn_id, request, answer, records, position=n, status=status)
        )
    store.close()
    return row.id


def _screen(app: object) -> list[list[tuple[str, str]]]:
    """The screen's cells, line by line: text with its style."""
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return [[(seg.text, str(seg.style)) for seg in strip.simplify()] for strip in strips]


async def test_stored_turns_look_like_full_turns_and_open_on_click(workspace: Path) -> None:
    session_id = _store(workspace)
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(90, 60)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        app.main.prompt.focus()
        stored = list(transcript.query(StoredTurnView))
        assert [v.turn_id for v in stored] == ["t1", "t2", "t3", "t4"]
        assert not transcript.query(ActivityRow)  # no row widgets until asked for
        transcript.scroll_home(animate=False)
        await pilot.pause()
        compact = _screen(app)
        copied = transcript.as_text()
        for view in stored:
            transcript.open_stored(view)
        await pilot.pause()
        transcript.scroll_home(animate=False)
        await pilot.pause()
        assert not transcript.query(StoredTurnView)
        full = _screen(app)
        for n, (a, b) in enumerate(zip(compact, full, strict=True)):
            assert a == b, (n, a, b)
        assert transcript.as_text() == copied
        assert transcript.last_answer == "Partial answer."


async def test_clicking_a_stored_row_opens_it_and_keeps_the_turn(workspace: Path) -> None:
    session_id = _store(workspace)
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(90, 60)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        transcript.scroll_home(animate=False)
        await pilot.pause()
        view = transcript.turns["t2"]
        assert isinstance(view, StoredTurnView)
        line = next(
            y for y, rid in view._lines(view.content_size.width)[1].items() if rid == "t2-a3"
        )
        await pilot.click(view, offset=(4, line))
        await until(pilot, lambda: isinstance(transcript.turns["t2"], TurnView))
        full = transcript.turns["t2"]
        assert isinstance(full, TurnView)
        row = full.rows["t2-a3"]
        await until(pilot, lambda: row.expanded and app.main.selected_activity is row)
        assert app.focused is row and row.query(".activity-body")
        await pilot.press("enter")
        assert not row.expanded
        assert full.query_one(".turn-footer").is_attached  # the step count came along
        # focusing a stored turn (Tab) opens it with its first row focused: its block's
        other = transcript.turns["t4"]
        assert isinstance(other, StoredTurnView)
        other.focus()
        await until(pilot, lambda: isinstance(transcript.turns["t4"], TurnView))
        opened = transcript.turns["t4"]
        assert isinstance(opened, TurnView)
        await pilot.pause()
        await pilot.pause()
        await until(pilot, lambda: app.focused is opened.blocks["i1"])


def _store_nested(workspace: Path) -> str:
    """One turn whose extension tools called other tools: review.run made two calls, and
    report (shown only at its end) made one call before its own row appeared."""
    from sample_turns import record

    from vis_core.events import ActivityEnded, ActivityStarted, TurnEnded, TurnStarted
    from vis_core.model.activity import ActivityPresentation as P
    from vis_core.store import Store

    store = Store(Path(os.environ["VIS_HOME"]) / "vis.db")
    sid = store.create_session(workspace.resolve(), workspace.resolve(), title="nested").id
    store.append(SessionCreated(sid, title="nested", workspace=str(workspace)))

    def rec(activity_id: str, headline: str, parent: str | None = None, **kw: object):
        made = record(activity_id, P(headline, f"{activity_id} summary"), session_id=sid, **kw)
        return type(made)(**{**made.__dict__, "parent_id": parent})

    review, read, grep = rec("p", "Review"), rec("c1", "Read", "p"), rec("c2", "Searched", "p")
    report, fetched = rec("e", "Report"), rec("d", "Fetched", "e")
    after = rec("r", "Listed")
    events = [TurnStarted(sid, turn_id="t1", position=1, request="review it")]
    for kind, item in [
        (ActivityStarted, review),
        (ActivityStarted, read),
        (ActivityEnded, read),
        (ActivityStarted, grep),
        (ActivityEnded, grep),
        (ActivityEnded, review),
        (ActivityStarted, fetched),
        (ActivityEnded, fetched),
        (ActivityStarted, report),
        (ActivityEnded, report),  # end-only: started at its end
        (ActivityStarted, after),
        (ActivityEnded, after),
    ]:
        events.append(kind(sid, activity=item))
    events.append(TurnEnded(sid, turn_id="t1", status=TurnStatus.COMPLETED, content="Done."))
    store.append_many(events)
    store.close()
    return sid


async def test_calls_an_extension_tool_made_show_under_its_row(workspace: Path) -> None:
    session_id = _store_nested(workspace)
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(90, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        app.main.prompt.focus()
        (stored,) = transcript.query(StoredTurnView)
        assert [(r.record.id, r.depth) for r in stored.rows] == [
            ("p", 0),
            ("c1", 1),
            ("c2", 1),
            ("e", 0),
            ("d", 1),
            ("r", 0),
        ]
        transcript.scroll_home(animate=False)
        await pilot.pause()
        compact = _screen(app)
        full = transcript.open_stored(stored)
        await pilot.pause()
        transcript.scroll_home(animate=False)
        await pilot.pause()
        rows = list(full.query(ActivityRow))
        assert [(r.record.id, r.depth) for r in rows] == [
            ("p", 0),
            ("c1", 1),
            ("c2", 1),
            ("e", 0),
            ("d", 1),
            ("r", 0),
        ]
        assert _screen(app) == compact  # the stored turn looks as the full one
        lines = ["".join(text for text, _ in line) for line in compact]

        def indent(word: str) -> int:
            line = next(line for line in lines if f"✓ {word}" in line)
            return line.index("✓")

        assert indent("Read") == indent("Searched") == indent("Review") + 2  # nested: two in
        assert indent("Fetched") == indent("Report") + 2 and indent("Listed") == indent("Review")


async def test_stored_turns_draw_with_the_themes_colours_as_the_app_made_them(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stored turn read the theme's colours by making the app's colour system anew
    (``App.get_css_variables``) for every turn it drew, page after page: it reads the ones
    the app's CSS was made with, and after a change of theme still looks like the full turn."""
    session_id = _store(workspace)
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(90, 60)) as pilot:
        await started(app, pilot)
        app.theme = "textual-light"
        transcript = app.main.transcript
        made: list[str] = []
        make = app.get_css_variables
        monkeypatch.setattr(app, "get_css_variables", lambda: made.append(app.theme) or make())
        await pilot.pause()
        stored = list(transcript.query(StoredTurnView))
        for view in stored:
            view.predraw(view.content_size.width, view)
        transcript.scroll_home(animate=False)
        await pilot.pause()
        compact = _screen(app)
        for view in stored:
            transcript.open_stored(view)
        await pilot.pause()
        transcript.scroll_home(animate=False)
        await pilot.pause()
        assert _screen(app) == compact
        assert made == ["textual-light"]  # the app's own, for its CSS
