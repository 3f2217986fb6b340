"""The sessions picker shows each child session (run_session, consult) under its parent."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pilot_keys import type_keys
from textual.widgets import OptionList

from vis_core.store import Store
from vis_tui.screens.sessions import SessionsScreen
from vis_tui.widgets.stored_turn import StoredTurnView

from .support import on_top, started, store_session, until, vis_app


async def test_the_picker_lists_children_under_the_session_that_started_them(
    workspace: Path,
) -> None:
    parent = store_session(workspace, ["count files"], title="count files")
    store_session(workspace, ["about owls"], title="about owls")
    child = store_session(workspace, ["count alpha"], title="count alpha")
    with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
        store.set_parent(child, parent)
    app = vis_app(workspace, resume="")
    async with app.run_test(size=(100, 30)) as pilot:
        await on_top(pilot, SessionsScreen)
        await until(pilot, lambda: bool(app.screen.query(OptionList)))
        listing = app.screen.query_one(OptionList)
        await until(pilot, lambda: listing.option_count == 3)
        texts = [str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count)]
        ids = [listing.get_option_at_index(i).id for i in range(listing.option_count)]
        await pilot.press("escape")
    assert child in ids, texts
    assert ids.index(child) == ids.index(parent) + 1
    assert texts[ids.index(child)].startswith("↳ count alpha")
    assert not texts[ids.index(parent)].startswith("↳")


async def test_a_child_sessions_activities_stay_folded_under_its_call(
    workspace: Path, tmp_path: Path, vis_home: Path
) -> None:
    (vis_home / "config.toml").write_text(
        '[models."scripted/script"]\ninput_price = 3.0\noutput_price = 15.0\n', encoding="utf-8"
    )
    data = {
        "responses": [{"code": 'print(await run_session("look around"))'}, {"text": "done"}],
        "sessions": {"look around": [{"code": 'print(await ls("."))'}, {"text": "looked"}]},
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    app = vis_app(workspace, path)
    async with app.run_test(size=(100, 40)) as pilot:
        await type_keys(pilot, *"look", "enter")
        await until(pilot, lambda: any(t.status for t in app.main.transcript.turns.values()))
        (turn,) = app.main.transcript.turns.values()
        (call,) = [r for r in turn.rows.values() if r.record.tool == "run_session"]
        (inner,) = [r for r in turn.rows.values() if r.record.tool == "ls"]
        assert inner.record.parent_id == call.record.id and inner.depth == 1
        assert not inner.display  # folded
        call.action_open_close()
        await pilot.pause()
        assert inner.display  # opened with its call
        call.action_open_close()
        await pilot.pause()
        assert not inner.display
        session_id = app.session.id
        with Store(Path(os.environ["VIS_HOME"]) / "vis.db") as store:
            (child,) = store.children(session_id)
        shown_cost = app.main.status_bar.cost
    assert child.cost > 0 and shown_cost > child.cost  # the status bar counts the child too
    assert abs(shown_cost - app.session.cost) < 1e-9
    resumed = vis_app(workspace, resume=session_id)
    async with resumed.run_test(size=(100, 40)) as pilot:
        await started(resumed, pilot)
        (stored,) = resumed.main.transcript.turns.values()
        assert isinstance(stored, StoredTurnView)
        drawn = "\n".join(strip.text for strip in stored._lines(96)[0])
        assert "Child session" in drawn and "List files" not in drawn  # folded there too
