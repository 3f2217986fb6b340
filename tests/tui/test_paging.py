"""Long transcripts: a capped number of mounted turns, unmounted and mounted again on scroll."""

from __future__ import annotations

import os
from pathlib import Path

from vis_core.events import SessionCreated, TurnStatus
from vis_tui.demo import turn_events
from vis_tui.widgets.transcript import Transcript

from .support import started, until, vis_app


def _store_session(workspace: Path, turns: int) -> str:
    from vis_core.store import Store

    store = Store(Path(os.environ["VIS_HOME"]) / "vis.db")
    row = store.create_session(workspace.resolve(), workspace.resolve(), title="long")
    store.append(SessionCreated(row.id, title="long", workspace=str(workspace)))
    for n in range(1, turns + 1):
        store.append_many(
            turn_events(row.id, f"t{n}", f"request {n}", f"answer {n}", [], position=n,
                        status=TurnStatus.COMPLETED)
        )
    store.close()
    return row.id


def _positions(transcript: Transcript) -> list[int]:
    return [child.position for child in transcript._mounted_turns()]


async def test_paging_keeps_at_most_max_turns_mounted_and_brings_them_back(
    workspace: Path,
) -> None:
    session_id = _store_session(workspace, 70)
    app = vis_app(workspace, resume=session_id)
    async with app.run_test(size=(100, 30)) as pilot:
        await started(app, pilot)
        transcript = app.main.transcript
        transcript.max_turns = 30
        assert _positions(transcript) == list(range(51, 71))
        for _ in range(300):
            if _positions(transcript)[:1] == [1]:
                break
            await pilot.press("pageup")
        await pilot.pause()
        assert _positions(transcript) == list(range(1, 31))
        assert not transcript.has_older and transcript.has_newer
        assert sorted(t.position for t in transcript.turns.values()) == list(range(1, 31))
        for _ in range(300):
            if not transcript.has_newer:
                break
            await pilot.press("pagedown")
        await until(pilot, lambda: _positions(transcript)[-1:] == [70])
        assert _positions(transcript) == list(range(41, 71))
        assert transcript.has_older
        await pilot.press("ctrl+home")
        for _ in range(300):
            if _positions(transcript)[:1] == [1]:
                break
            await pilot.press("pageup")
        assert _positions(transcript)[:1] == [1]
        await pilot.press("ctrl+end")
        await until(pilot, lambda: _positions(transcript) == list(range(51, 71)))
        assert not transcript.has_newer and transcript.has_older
