"""Figure: from launching ``vis`` to the prompt accepting keys, on an empty workspace, and to
the welcome header of a new session with a model set (the app ready to read).

Starts the real ``vis`` command in a pseudo-terminal, types a marker as soon as it can, and
times until the prompt is painted (its placeholder shows: first paint) and until the marker is
echoed inside the prompt (the key was accepted: ready). Another ``vis``, with a model set in
its ``config.toml`` (an OpenAI-compatible server of one's own: nothing is asked of it before
the first request), is timed until its welcome header is painted (the model's name and the
last tip show): on a first start (a fresh ``VIS_HOME``), and on a daily start (a ``VIS_HOME``
Vis opened once before, untimed). The anchor, run in turn with them (A B C D A B C D …): a
bare Textual app with one Input and the same placeholder, timed the same way. Prints the
medians and the median of the pairwise ratios (targets: first paint ≤ 1.2×, welcome header
≤ 1.4×, key accepted ≤ 1.5×). Run: ``.venv/bin/python bench/tui_startup.py [RUNS [FOLDER]]``;
with FOLDER, each ``vis`` starts in that folder (a large checkout) instead of an empty one.
The load average is printed beside the figures (ratios on a loaded machine still compare like
with like, the absolute times do not).

``--cpu [SECONDS]``: the app's own CPU (utime + stime from /proc, per second of wall time, over
SECONDS, 20 by default) once started with the scripted provider: idle at the prompt, typing (10
keys a second), idle and typing again after 60 answered requests (a long transcript), and
while an answer streams (16-character deltas 10 ms apart); the bare app beside it, idle and
typing.
"""

from __future__ import annotations

import json
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
MODEL = "local/bench-model"
# The welcome header is painted: the model it names and its last tip (one styled run each).
HEADER_TEXTS = (MODEL.encode(), b"PageUp scrolls back")
CONFIG = f"""model = "{MODEL}"
[providers.local]
base_url = "http://127.0.0.1:9/v1"
"""


BARE_APP = """
from textual.app import App
from textual.widgets import Input

class Bare(App):
    def compose(self):
        yield Input(placeholder="Ask Vis… (the anchor)")

Bare().run()
"""


def header_run(home: Path, workspace: Path, *, used_before: bool = False) -> float:
    """Seconds until ``vis`` with a model set painted its welcome header; ``used_before``:
    in a ``VIS_HOME`` that Vis opened once already (untimed), as a person's daily start is
    (the first start also creates the database)."""
    (home / "config.toml").write_text(CONFIG, encoding="utf-8")
    if used_before:
        one_run(home, workspace, until=HEADER_TEXTS)
    return one_run(home, workspace, until=HEADER_TEXTS)[0]


LONG_TRANSCRIPT = 60  # answered requests before the "long transcript" figures
TYPED = "hello world"


class Terminal:
    """A command in a pseudo-terminal of ``size`` (columns, lines), its output read as it
    comes, so the app never waits on a full terminal; :meth:`close` quits it with Ctrl+Q."""

    def __init__(
        self, command: list[str], home: Path, workspace: Path, size: tuple[int, int] = (120, 40)
    ) -> None:
        self.master, slave = pty.openpty()
        env = {**os.environ, "VIS_HOME": str(home), "TERM": "xterm-256color"}
        env.update(COLUMNS=str(size[0]), LINES=str(size[1]))
        self.proc = subprocess.Popen(
            command,
            cwd=workspace,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            close_fds=True,
            start_new_session=True,
        )
        os.close(slave)
        self.seen = b""

    def read(self, wait: float) -> bytes:
        """What the command wrote within ``wait`` seconds (b"": nothing yet); OSError once
        it ended."""
        ready, _, _ = select.select([self.master], [], [], wait)
        return os.read(self.master, 65536) if ready else b""

    def run_for(self, seconds: float, keys_per_second: float = 0) -> None:
        """Read the output for ``seconds``, typing ``TYPED`` (then Ctrl+U) at that rate."""
        end = time.perf_counter() + seconds
        next_key, typed = time.perf_counter(), 0
        while (now := time.perf_counter()) < end:
            if keys_per_second and now >= next_key:
                key = TYPED[typed] if typed < len(TYPED) else "\x15"
                os.write(self.master, key.encode())
                typed = (typed + 1) % (len(TYPED) + 1)
                next_key += 1 / keys_per_second
            self.seen = (self.seen + self.read(0.01))[-4096:]

    def until(self, text: bytes, seconds: float = 30) -> None:
        end = time.perf_counter() + seconds
        while text not in self.seen:
            if time.perf_counter() > end:
                raise RuntimeError(f"{text!r} did not show within {seconds} s")
            self.run_for(0.05)

    def cpu(self, seconds: float, keys_per_second: float = 0) -> float:
        """CPU seconds the process spent per second over the next ``seconds``."""
        ticks = os.sysconf("SC_CLK_TCK")

        def used() -> int:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return int(fields[11]) + int(fields[12])  # utime, stime

        before, start = used(), time.perf_counter()
        self.run_for(seconds, keys_per_second)
        return (used() - before) / ticks / (time.perf_counter() - start)

    def close(self) -> None:
        os.write(self.master, b"\x11")  # Ctrl+Q quits both (Ctrl+C would clear a typed marker)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.master)


def one_run(
    home: Path,
    workspace: Path,
    command: list[str] | None = None,
    until: tuple[bytes, ...] = (),
) -> tuple[float, float]:
    """Seconds until the prompt is painted (its placeholder shows) and until it accepted a key;
    with ``until``: until all of those texts were painted (and 0.0)."""
    start = time.perf_counter()
    terminal = Terminal(command or [str(VIS)], home, workspace, size=(100, 30))
    seen = b""
    typed = False
    painted = 0.0
    try:
        while time.perf_counter() - start < 30:
            try:
                seen += terminal.read(0.005)
            except OSError:
                break
            if until:
                if all(text in seen for text in until):
                    return time.perf_counter() - start, 0.0
                continue
            if not typed and READY_TEXT in seen:
                painted = time.perf_counter() - start
                os.write(terminal.master, MARKER.encode())
                typed = True
                seen = b""
            if typed and MARKER.encode() in seen:
                return painted, time.perf_counter() - start
        raise RuntimeError(f"{command or 'vis'} did not show the prompt within 30 s")
    finally:
        terminal.close()


def cpu_figures(seconds: float) -> None:
    """Print the ``--cpu`` figures (see the module's docstring)."""
    answer = "Answered: " + "lorem ipsum dolor sit amet " * 20 + "\n\n- one\n- two\n"
    responses: list[dict[str, object]] = [{"text": answer} for _ in range(LONG_TRANSCRIPT)]
    streamed = "word " * int(seconds * 100 * 16 / 5 + 2000)  # outlasts the measure
    responses.append({"text": streamed, "chunk": 16, "delay_ms": 10})
    figures: list[tuple[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "ws"
        home.mkdir()
        workspace.mkdir()
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps(responses), encoding="utf-8")
        command = [str(VIS), "--provider", "scripted", "--script", str(script)]
        vis = Terminal(command, home, workspace)
        try:
            vis.until("○ ready".encode())
            vis.run_for(3)
            figures.append(("vis idle at the prompt", vis.cpu(seconds)))
            figures.append(("vis typing", vis.cpu(seconds, 10)))
            for n in range(LONG_TRANSCRIPT):
                os.write(vis.master, f"question {n}\r".encode())
                vis.run_for(0.6)
            vis.run_for(3)
            figures.append((f"vis idle after {LONG_TRANSCRIPT} turns", vis.cpu(seconds)))
            figures.append((f"vis typing after {LONG_TRANSCRIPT} turns", vis.cpu(seconds, 10)))
            os.write(vis.master, b"\x15stream\r")
            vis.run_for(1)
            figures.append(("vis while an answer streams", vis.cpu(seconds)))
        finally:
            vis.close()
        bare = Terminal([sys.executable, "-c", BARE_APP], home, workspace)
        try:
            bare.until(b"the anchor")
            bare.run_for(3)
            figures.append(("bare Textual app with an Input, idle", bare.cpu(seconds)))
            figures.append(("bare Textual app with an Input, typing", bare.cpu(seconds, 10)))
        finally:
            bare.close()
    for label, share in figures:
        print(f"{label}: {share * 100:.1f}% of a core ({seconds:.0f} s)")
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    print(f"load average (1, 5, 15 min): {load}")


def main() -> int:
    if sys.argv[1:2] == ["--cpu"]:
        cpu_figures(float(sys.argv[2]) if len(sys.argv) > 2 else 20)
        return 0
    compile_vis()  # as an installed Vis has it (bench/precompile.py)
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    checkout = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else None
    vis: list[tuple[float, float]] = []
    headers: list[float] = []
    daily: list[float] = []
    bare_app: list[tuple[float, float]] = []
    bare = [sys.executable, "-c", BARE_APP]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(runs):
            folders: list[tuple[Path, Path]] = []
            for kind in ("vis", "header", "daily", "bare"):
                home, workspace = Path(tmp) / f"{kind}-home{index}", Path(tmp) / f"{kind}-ws{index}"
                home.mkdir()
                workspace.mkdir()
                folders.append(
                    (home, workspace if checkout is None or kind == "bare" else checkout)
                )
            vis.append(one_run(*folders[0]))
            headers.append(header_run(*folders[1]))
            daily.append(header_run(*folders[2], used_before=True))
            bare_app.append(one_run(folders[3][0], folders[3][1], bare))
    load_after = os.getloadavg()
    figures = (
        ("prompt painted", [pair[0] for pair in vis], 0, "1.2x"),
        (f"welcome header with a model set ({MODEL}), first start", headers, 0, "1.4x"),
        ("the same in a VIS_HOME used before (a daily start)", daily, 0, "1.4x"),
        ("accepted key", [pair[1] for pair in vis], 1, "1.5x"),
    )
    for label, times, which, target in figures:
        anchors = [pair[which] for pair in bare_app]
        ratio = statistics.median(a / b for a, b in zip(times, anchors, strict=True))
        print(
            f"vis startup to {label}, {runs} runs: median {statistics.median(times):.3f} s, "
            f"min {min(times):.3f} s, max {max(times):.3f} s; a bare Textual app with one "
            f"Input: median {statistics.median(anchors):.3f} s; ratio {ratio:.2f}x "
            f"(target <= {target})"
        )
    before = " ".join(f"{value:.2f}" for value in load_before)
    after = " ".join(f"{value:.2f}" for value in load_after)
    print(f"load average (1, 5, 15 min) before: {before}; after: {after}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
