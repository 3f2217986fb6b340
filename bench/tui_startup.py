"""Figure: from launching ``vis`` to the prompt accepting keys, on an empty workspace.

Starts the real ``vis`` command in a pseudo-terminal, types a marker as soon as it can, and
times until the prompt is painted (its placeholder shows: first paint) and until the marker is
echoed inside the prompt (the key was accepted: ready). The anchor, run in turn with it
(A B A B …): a bare Textual app with one Input and the same placeholder, timed the same way.
Prints both medians of each and the median of the pairwise ratios (targets ≤ 1.3× / ≤ 1.5×).
Run: ``.venv/bin/python bench/tui_startup.py [RUNS]``.
"""

from __future__ import annotations

import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from precompile import compile_vis

VIS = Path(sys.executable).with_name("vis")
MARKER = "zq"
# The prompt's placeholder after its first letter: the cursor cell styles the "A" apart, so
# "Ask Vis" only shows once the cursor blinks off (~1 s later than the prompt is painted).
READY_TEXT = "sk Vis…".encode()


BARE_APP = """
from textual.app import App
from textual.widgets import Input

class Bare(App):
    def compose(self):
        yield Input(placeholder="Ask Vis… (the anchor)")

Bare().run()
"""


def one_run(home: Path, workspace: Path, command: list[str] | None = None) -> tuple[float, float]:
    """Seconds until the prompt is painted (its placeholder shows) and until it accepted a key."""
    master, slave = pty.openpty()
    env = {
        **os.environ,
        "VIS_HOME": str(home),
        "TERM": "xterm-256color",
        "COLUMNS": "100",
        "LINES": "30",
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        command or [str(VIS)],
        cwd=workspace,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    typed = False
    painted = 0.0
    try:
        while time.perf_counter() - start < 30:
            ready, _, _ = select.select([master], [], [], 0.005)
            if ready:
                try:
                    seen += os.read(master, 65536)
                except OSError:
                    break
            if not typed and READY_TEXT in seen:
                painted = time.perf_counter() - start
                os.write(master, MARKER.encode())
                typed = True
                seen = b""
            if typed and MARKER.encode() in seen:
                return painted, time.perf_counter() - start
        raise RuntimeError(f"{command or 'vis'} did not show the prompt within 30 s")
    finally:
        os.write(master, b"\x11")  # Ctrl+Q quits both (Ctrl+C would clear the typed marker)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        os.close(master)


def main() -> int:
    compile_vis()  # as an installed Vis has it (bench/precompile.py)
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    vis: list[tuple[float, float]] = []
    bare_app: list[tuple[float, float]] = []
    bare = [sys.executable, "-c", BARE_APP]
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(runs):
            home, workspace = Path(tmp) / f"home{index}", Path(tmp) / f"ws{index}"
            home.mkdir()
            workspace.mkdir()
            vis.append(one_run(home, workspace))
            bare_app.append(one_run(home, workspace, bare))
    for which, label, target in ((0, "prompt painted", "1.3x"), (1, "accepted key", "1.5x")):
        times = [pair[which] for pair in vis]
        anchors = [pair[which] for pair in bare_app]
        ratio = statistics.median(a / b for a, b in zip(times, anchors, strict=True))
        print(
            f"vis startup to {label}, {runs} runs: median {statistics.median(times):.3f} s, "
            f"min {min(times):.3f} s, max {max(times):.3f} s; a bare Textual app with one "
            f"Input: median {statistics.median(anchors):.3f} s; ratio {ratio:.2f}x "
            f"(target <= {target})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
