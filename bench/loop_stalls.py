"""Figure: the app's event-loop stalls through real flows, each with the Vis frame it was in.

The app runs under Textual's Pilot with the scripted model, the bundled extensions, an
extension tool that asks a form, an mcp.json stdio server (tests/mcp_servers/server_app.py)
and a git workspace of 400 files. A daemon thread pings the loop every 10 ms; a ping that
waits longer than the threshold is a stall: its length is printed with the flow it came in
and the Vis frames the loop's thread was most often sampled in (every 20 ms), each with the
innermost frame under it. Flows: start and first keys, a first turn whose block calls
ls/grep/shell, a long Markdown answer, a form (vis.ask), /settings, /mcp, the model picker,
/export; --resume of a 2,000-turn session, paging up through it and Ctrl+End back down.
Each of the two phases (a new session's flows; the resume and paging) runs in a process of its
own, so what a phase imports first is imported there as at a person's start.
Run: ``.venv/bin/python bench/loop_stalls.py [--threshold MS] [--phases resume]`` (default
100 ms, both phases).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))

ASKER = '''"""A tool that asks the person a form."""
import vis_core.extension as vis


def ask_name() -> str:
    """Ask the person for a name."""
    return str(vis.ask("Name?", [vis.plaintext("name")]).get("name"))


vis.register_extension(vis.Extension(
    name="asker", alias="asker", description="Asks.",
    symbols=[vis.Symbol(ask_name, activity=vis.Activity(label="Ask name", show_start=False))],
))
'''


# the watcher could not sample: C code on the loop's thread held the GIL throughout
NO_SAMPLE = "(no sample: the loop's thread held the GIL)"


class StallWatch:
    """Pings the loop from a thread; records each wait over ``threshold`` with samples of the
    loop thread's stack."""

    def __init__(self, loop: asyncio.AbstractEventLoop, threshold: float) -> None:
        self.loop, self.threshold = loop, threshold
        self.flow = "start"
        self.stalls: list[tuple[str, float, list[str]]] = []
        self._ident = threading.get_ident()
        self._stop = threading.Event()
        threading.Thread(target=self._watch, name="stall-watch", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.is_set():
            seen = threading.Event()
            try:
                self.loop.call_soon_threadsafe(seen.set)
            except RuntimeError:
                return
            started = time.monotonic()
            frames: collections.Counter[str] = collections.Counter()
            while not seen.wait(0.02):
                frame = sys._current_frames().get(self._ident)
                if frame is not None:
                    frames[_vis_frame(traceback.extract_stack(frame))] += 1
            took = time.monotonic() - started
            if took > self.threshold:
                where = [f for f, _ in frames.most_common(3)] or [NO_SAMPLE]
                self.stalls.append((self.flow, took, where))
            time.sleep(0.01)


def _vis_frame(stack: traceback.StackSummary) -> str:
    """The innermost frame of Vis's own code, with the frame below it."""
    for i in range(len(stack) - 1, -1, -1):
        name = stack[i].filename
        if "/vis_core/" in name or "/vis_tui/" in name:
            inner = stack[-1]
            where = f"{Path(name).parent.name}/{Path(name).name}:{stack[i].lineno} {stack[i].name}"
            return f"{where} > {Path(inner.filename).name}:{inner.lineno} {inner.name}"
    return "(Textual or asyncio only)"


def _workspace(root: Path) -> Path:
    workspace = root / "work"
    for d in range(20):
        folder = workspace / f"pkg{d}"
        folder.mkdir(parents=True)
        for f in range(20):
            (folder / f"m{f}.py").write_text(f"def f{f}():\n    return {f}  # TODO\n")
    (workspace / "README.md").write_text("# Project\n")
    git = ["git", "-c", "user.email=b@example.com", "-c", "user.name=bench"]
    subprocess.run([*git, "init", "-q"], cwd=workspace, check=True)
    subprocess.run([*git, "add", "-A"], cwd=workspace, check=True)
    subprocess.run([*git, "commit", "-qm", "start"], cwd=workspace, check=True)
    return workspace


def _script(root: Path) -> Path:
    import yaml

    markdown = "\n".join(
        f"## Part {i}\n\nSome *text*, `code` and **bold**.\n\n```python\n"
        + "\n".join(f"def f{i}_{j}(x):\n    return x * {j}" for j in range(12))
        + "\n```\n"
        for i in range(30)
    )
    steps: list[dict[str, Any]] = [
        {"code": "print(await ls('.'))\nprint(await grep('TODO', '.'))\nprint(await shell('ls'))"},
        {"text": "Done."},
        {"text": markdown, "chunk": 200},
        {"code": "print(await asker.ask_name())"},
        {"text": "Asked."},
    ]
    path = root / "script.yaml"
    path.write_text(yaml.safe_dump(steps), encoding="utf-8")
    return path


async def _settle(pilot: Any, seconds: float = 1.5) -> None:
    await pilot.pause(seconds)


async def _turn(app: Any, pilot: Any, text: str, form: bool = False) -> None:
    from vis_tui.screens.form import FormScreen

    await pilot.press(*text, "enter")
    for _ in range(3000):
        await pilot.pause(0.02)
        if form and isinstance(app.screen, FormScreen):
            await pilot.press(*"Ada", "ctrl+s")
            form = False
        if app.session is not None and not app.session.running and not app.main.queue:
            break
    await _settle(pilot)


async def _command(pilot: Any, text: str, close: bool = True) -> None:
    await pilot.press(*text, "enter")
    await _settle(pilot)
    if close:
        await pilot.press("escape")
        await _settle(pilot, 0.5)


async def session_flows(app: Any, pilot: Any, watch: StallWatch) -> None:
    await pilot.press(*"hello")  # first keys
    await _settle(pilot)
    for _ in range(5):
        await pilot.press("backspace")
    watch.flow = "first turn (ls, grep, shell)"
    await _turn(app, pilot, "look around")
    watch.flow = "long Markdown answer"
    await _turn(app, pilot, "explain")
    watch.flow = "form (vis.ask)"
    await _turn(app, pilot, "ask me", form=True)
    for flow in ("/settings", "/mcp", "/model"):
        watch.flow = flow
        await _command(pilot, flow)
    watch.flow = "/export"
    await _command(pilot, "/export", close=False)
    print(f"turns shown: {len(app.main.transcript.turns)} of 3")


async def resume_flows(app: Any, pilot: Any, watch: StallWatch) -> None:
    watch.flow = "paging up"
    for _ in range(40):
        await pilot.press("pageup")
    await _settle(pilot)
    watch.flow = "Ctrl+End (the newest page again)"
    await pilot.press("ctrl+end")
    await _settle(pilot)


async def run_phase(
    phase: str, workspace: Path, script: Path, resume: str, threshold: float
) -> None:
    """One phase in this process, as a person's fresh start: its stalls printed."""
    from vis_core.host import HostOptions
    from vis_tui.app import VisApp

    watch = StallWatch(asyncio.get_running_loop(), threshold)
    options = HostOptions(workspace=workspace, provider="scripted", script=script)
    if phase == "resume":
        watch.flow = "--resume (2,000 turns)"
    app = VisApp(options, frozen=True, resume=resume if phase == "resume" else None)
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 60)
        await _settle(pilot)
        await (resume_flows if phase == "resume" else session_flows)(app, pilot, watch)
    watch.stop()
    for flow, took, frames in watch.stalls:
        print(f"{took * 1000:7.0f} ms  {flow}")
        for frame in frames:
            print(f"            {frame}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threshold", type=float, default=100, help="milliseconds")
    parser.add_argument("--phases", default="session,resume", help="which, comma-separated")
    parser.add_argument("--phase", nargs=4, help=argparse.SUPPRESS)  # NAME WORK SCRIPT ID
    args = parser.parse_args()
    if args.phase:
        name, work, script, resume = args.phase
        asyncio.run(run_phase(name, Path(work), Path(script), resume, args.threshold / 1000))
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home = root / "home"
        (home / "extensions").mkdir(parents=True)
        (home / "extensions" / "asker.py").write_text(ASKER, encoding="utf-8")
        server = ROOT / "tests" / "mcp_servers" / "server_app.py"
        entry = {"command": sys.executable, "args": [str(server), "stdio"]}
        (home / "mcp.json").write_text(json.dumps({"mcpServers": {"local": entry}}))
        env = {**os.environ, "VIS_HOME": str(home)}
        os.environ["VIS_HOME"] = str(home)
        workspace = _workspace(root)
        from tui_transcript import build_store

        resume = build_store(home, workspace)
        script = _script(root)
        print(f"stalls over {args.threshold:.0f} ms, each phase a fresh process")
        for phase in args.phases.split(","):
            argv = [sys.executable, __file__, "--threshold", str(args.threshold)]
            argv += ["--phase", phase, str(workspace), str(script), resume]
            subprocess.run(argv, env=env, check=True)


if __name__ == "__main__":
    main()
