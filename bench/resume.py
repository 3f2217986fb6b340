"""Figure: resume a stored session of 2,000 turns and 10,000 Activities through the Host.

Measured: ``Host.open_session`` until the session's history is ready (events read, decoded and
folded into the conversation the next request is built from). Anchor, in the same run: reading
the same event rows' bytes from SQLite and nothing else. Target: ≤ 1 s.
Run: ``.venv/bin/python bench/resume.py``.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from tui_transcript import build_store  # the same 2,000-turn session

RUNS = 5


async def open_once(workspace: Path, session_id: str) -> float:
    from vis_core.host import Host, HostOptions

    host = await Host.open(HostOptions(workspace=workspace))
    started = time.perf_counter()
    session = await host.open_session(session_id)
    took = time.perf_counter() - started
    await session.close()
    await host.close()
    return took


def read_rows(database: Path) -> float:
    started = time.perf_counter()
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT * FROM events").fetchall()
    assert rows
    return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp, "home"), Path(tmp, "work")
        home.mkdir()
        workspace.mkdir()
        os.environ["VIS_HOME"] = str(home)
        session_id = build_store(home, workspace)
        pairs = []
        for _ in range(RUNS):
            pairs.append(
                (asyncio.run(open_once(workspace, session_id)), read_rows(home / "vis.db"))
            )
    resumed = statistics.median(a for a, _ in pairs)
    anchor = statistics.median(b for _, b in pairs)
    print(
        f"resume 2,000 turns / 10,000 Activities until history is ready: median "
        f"{resumed * 1000:.0f} ms (target ≤ 1000 ms); reading the event rows alone: "
        f"{anchor * 1000:.0f} ms; ratio {resumed / anchor:.1f}x over {RUNS} runs"
    )


if __name__ == "__main__":
    main()
