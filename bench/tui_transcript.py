"""Figures: open a stored session of 2,000 turns and 10,000 Activities in the app.

Prints the time to first paint (Host open + the frame that shows the newest turns; the session
keeps restoring its history in a thread until "session ready"; the time until the app is also
idle once is printed beside it), resident memory, and how long each PageUp takes to be handled:
from the key's delivery until the last frame it causes, including any older turns it mounts
(older turns mount as the top is reached), and until its first frame (the scroll shown); then
the same for PageDown back to the newest turn (newer turns mount again, older ones go). The
Pilot's own ``press`` waits for the process to go idle (two 20 ms windows), so it is not the
measure.
Run: ``.venv/bin/python bench/tui_transcript.py``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

# The sample turns are test fixtures: tests/sample_turns.py.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

TURNS = 2000
PAGEUPS = 100
ACTIVITIES_PER_TURN = 5


def build_store(home: Path, workspace: Path) -> str:
    from sample_turns import every_block_records, turn_events

    from vis_core.events import SessionCreated
    from vis_core.model.turn import TurnStatus
    from vis_core.store import Store

    store = Store(home / "vis.db")
    row = store.create_session(workspace, workspace, title="long session")
    store.append(SessionCreated(row.id, title=row.title, workspace=str(workspace)))
    for position in range(1, TURNS + 1):
        turn_id = f"turn{position}"
        iteration_id = f"{turn_id}-i1"  # each turn's block its own (a row per turn)
        records = [
            type(r)(
                **{
                    **r.__dict__,
                    "id": f"{turn_id}-{r.id}",
                    "session_id": row.id,
                    "iteration_id": iteration_id,
                }
            )
            for r in every_block_records(str(workspace), turn_id)[:ACTIVITIES_PER_TURN]
        ]
        events = turn_events(
            row.id,
            turn_id,
            f"request number {position}",
            f"Answer **{position}** with some text.",
            records,
            position=position,
            status=TurnStatus.COMPLETED,
        )
        store.append_many(
            [
                dataclasses.replace(e, iteration_id=iteration_id)
                if getattr(e, "iteration_id", None) == "i1"
                else e
                for e in events
            ]
        )
    store.close()
    return row.id


async def measure(workspace: Path, session_id: str) -> None:
    from textual import events

    from vis_core.host import HostOptions
    from vis_tui.app import VisApp
    from vis_tui.screens.main import MainScreen

    frames: list[float] = []  # when each screen update finished
    refresh = MainScreen._compositor_refresh

    def stamped(self: MainScreen) -> None:
        refresh(self)
        frames.append(time.perf_counter())

    MainScreen._compositor_refresh = stamped  # type: ignore[method-assign]
    app = VisApp(HostOptions(workspace=workspace), resume=session_id, frozen=True)
    start = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(app.painted.wait(), 120)
        painted = time.perf_counter()
        transcript = app.main.transcript
        while not (
            frames
            and frames[-1] > painted
            and transcript.turns
            and all(view.region.height for view in transcript._mounted_turns()[-1:])
        ):
            await asyncio.sleep(0.002)
        first_paint = frames[-1] - start  # the frame that shows the newest turns
        await pilot.pause()
        first_idle = time.perf_counter() - start
        await asyncio.wait_for(app.ready.wait(), 120)
        ready = time.perf_counter() - start
        await pilot.pause()
        mounted = len(transcript.turns)

        async def press(key: str) -> tuple[float, float] | None:
            """Milliseconds from the key to the last frame it causes, and to its first (None
            when it draws nothing: the end was reached)."""
            await pilot.pause()
            t0 = time.perf_counter()
            app._driver.send_message(events.Key(key, None))  # type: ignore[union-attr]
            # Handled: the key's frames are out, any page it loads is mounted and drawn, and
            # nothing more is drawn for 50 ms (then the last frame's time counts).
            while True:
                await asyncio.sleep(0.002)
                now = time.perf_counter()
                busy = transcript._loading or any(
                    w.group == "page" and not w.is_finished for w in app.workers
                )
                drawn = bool(frames) and frames[-1] > t0
                if not busy and drawn and now - frames[-1] > 0.05:
                    break
                if not busy and not drawn and now - t0 > 1:
                    return None
            first = next(f for f in frames if f > t0)
            return (frames[-1] - t0) * 1000, (first - t0) * 1000

        ups = [p for _ in range(PAGEUPS) if (p := await press("pageup")) is not None]
        loaded = len(transcript.turns)
        top = min(t.position for t in transcript.turns.values())
        downs = []
        while (down := await press("pagedown")) is not None:  # back to the newest turn
            downs.append(down)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"turns stored: {TURNS}, activities stored: {TURNS * ACTIVITIES_PER_TURN}")
    print(f"first paint: {first_paint:.2f} s  (turns mounted: {mounted})")
    print(f"first paint and the app idle once: {first_idle:.2f} s")
    print(f"session ready: {ready:.2f} s")
    print(f"resident memory (max RSS): {rss_mb:.0f} MB")
    print(
        f"PageUp x{len(ups)} {_figures(ups)} (turns mounted after: {loaded}, oldest shown: {top})"
    )
    print(f"PageDown back x{len(downs)} {_figures(downs)}")


def _figures(presses: list[tuple[float, float]]) -> str:
    """Median, p95 and worst of the last and of the first frames, in ms."""

    def spread(values: list[float]) -> str:
        ordered = sorted(values)
        median, p95, worst = (
            statistics.median(ordered),
            ordered[int(len(ordered) * 0.95)],
            ordered[-1],
        )
        return f"median {median:.1f} ms, p95 {p95:.1f} ms, worst {worst:.1f} ms"

    return (
        f"to the last frame: {spread([last for last, _ in presses])}; "
        f"to the first frame: {spread([first for _, first in presses])}"
    )


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "workspace"
        home.mkdir()
        workspace.mkdir()
        os.environ["VIS_HOME"] = str(home)
        t0 = time.perf_counter()
        session_id = build_store(home, workspace)
        print(f"built the store in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        asyncio.run(measure(workspace, session_id))
    return 0


if __name__ == "__main__":
    sys.exit(main())
