"""Figure: export a stored session of 2,000 turns and 10,000 Activities as md, html and json.

Measured: reading the session from a real SQLite store and rendering it (what ``vis export``
does after its start), per format; and one whole ``vis export ID --format html`` process.
Target: ≤ 2 s per format. Run: ``.venv/bin/python bench/export.py``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from tui_transcript import build_store  # the same 2,000-turn session as the TUI benches

RUNS = 3


def export_once(database: Path, session_id: str, fmt: str) -> tuple[float, int]:
    from vis_core.session_files import ExportFormat, export_session
    from vis_core.store import Store
    from vis_core.store.stored_session import find_session

    started = time.perf_counter()
    store = Store(database)
    text = export_session(store, find_session(store, session_id), ExportFormat(fmt))
    store.close()
    return time.perf_counter() - started, len(text)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp, "home"), Path(tmp, "work")
        home.mkdir()
        workspace.mkdir()
        os.environ["VIS_HOME"] = str(home)
        session_id = build_store(home, workspace)
        for fmt in ("md", "html", "json"):
            runs = [export_once(home / "vis.db", session_id, fmt) for _ in range(RUNS)]
            took = statistics.median(t for t, _ in runs)
            print(
                f"export 2,000 turns / 10,000 Activities as {fmt}: median {took * 1000:.0f} ms "
                f"(target ≤ 2000 ms), {runs[0][1] / 1e6:.1f} MB, over {RUNS} runs"
            )
        vis = Path(sys.executable).with_name("vis")
        started = time.perf_counter()
        subprocess.run(
            [
                str(vis),
                "export",
                session_id[:8],
                "--format",
                "html",
                "-o",
                str(Path(tmp, "s.html")),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        took = time.perf_counter() - started
        print(f"`vis export ID --format html -o FILE`, the whole process: {took * 1000:.0f} ms")


if __name__ == "__main__":
    main()
