"""Figures: open a stored session of 2,000 turns and 10,000 Activities in the app.

Prints the time to first paint (Host open + session + newest page mounted), resident memory,
and the time each PageUp takes (older pages load as the top is reached).
Run: ``.venv/bin/python bench/tui_transcript.py``.
"""

from __future__ import annotations

import asyncio
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

TURNS = 2000
PAGEUPS = 100
ACTIVITIES_PER_TURN = 5


def build_store(home: Path, workspace: Path) -> str:
    from vis_core.events import SessionCreated, TurnStatus
    from vis_core.store import Store
    from vis_tui.demo import every_block_records, turn_events

    store = Store(home / "vis.db")
    row = store.create_session(workspace, workspace, title="long session")
    store.append(SessionCreated(row.id, title=row.title, workspace=str(workspace)))
    for position in range(1, TURNS + 1):
        turn_id = f"turn{position}"
        records = [
            type(r)(**{**r.__dict__, "id": f"{turn_id}-{r.id}", "session_id": row.id})
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
        store.append_many(events)
    store.close()
    return row.id


async def measure(workspace: Path, session_id: str) -> None:
    from vis_core.host import HostOptions
    from vis_tui.app import VisApp

    app = VisApp(HostOptions(workspace=workspace), resume=session_id, frozen=True)
    start = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 120)
        await pilot.pause()
        first_paint = time.perf_counter() - start
        mounted = len(app.main.transcript.turns)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        times = []
        for _ in range(PAGEUPS):
            t0 = time.perf_counter()
            await pilot.press("pageup")
            times.append((time.perf_counter() - t0) * 1000)
        loaded = len(app.main.transcript.turns)
    print(f"turns stored: {TURNS}, activities stored: {TURNS * ACTIVITIES_PER_TURN}")
    print(f"first paint: {first_paint:.2f} s  (turns mounted: {mounted})")
    print(f"resident memory (max RSS): {rss_mb:.0f} MB")
    print(
        f"PageUp x{len(times)}: median {statistics.median(times):.1f} ms, "
        f"p95 {sorted(times)[int(len(times) * 0.95)]:.1f} ms, worst {max(times):.1f} ms "
        f"(turns mounted after: {loaded})"
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
