"""Figure: a scripted answer of 200 KB (paragraphs of 20 lines) streamed in 16-character
deltas as fast as the provider emits them, while keys are typed into the prompt; prints the
stream time, the time from the core's last AssistantDelta and from its TurnEnded to the frame
that has the answer's last line drawn (the whole answer on screen), and key latency (worst,
p95, median). ``--one-paragraph``: the same words as one 200 KB paragraph. ``--blocks``: three
blocks run first (one writes and removes files, one prints 200 lines, one fails), each a row.

A key's latency is the time from posting the key event to the character being in the prompt.
Run: ``.venv/bin/python bench/tui_stream.py [--one-paragraph] [--blocks]``.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TOKENS = 50_000  # 200 KB of answer, streamed 16 characters at a time
CHARS_PER_TOKEN = 4
CHUNK = 16  # characters per streamed delta


async def measure(workspace: Path, script: Path, total: int) -> None:
    from textual import events

    from vis_core.host import HostOptions
    from vis_tui.app import VisApp
    from vis_tui.widgets.answer import AnswerView

    app = VisApp(HostOptions(workspace=workspace, provider="scripted", script=script), frozen=True)
    last_line_drawn: list[float] = []  # when the answer's last line was drawn, whole
    frames: list[float] = []  # when each frame went to the (headless) terminal
    draw_line = AnswerView.render_line

    def noting_render_line(view: AnswerView, y: int) -> Any:
        strip = draw_line(view, y)
        height = view.content_size.height
        if len(view.source) == total and y == height - 1 and not last_line_drawn:
            last_line_drawn.append(time.perf_counter())
        return strip

    AnswerView.render_line = noting_render_line  # type: ignore[method-assign]
    show = app._display

    def noting_display(screen: Any, renderable: Any) -> None:
        show(screen, renderable)
        if renderable is not None and last_line_drawn and len(frames) == 0:
            frames.append(time.perf_counter())

    app._display = noting_display  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 30)
        await pilot.pause()
        prompt = app.main.prompt
        prompt.focus()
        ended_at: list[float] = []  # when the core emitted TurnEnded (saved, then published)
        delta_at: list[float] = []  # when the core emitted the last AssistantDelta

        def note_end(event: object) -> None:
            name = type(event).__name__
            if name == "TurnEnded":
                ended_at.append(time.perf_counter())
            elif name == "AssistantDelta":
                delta_at[:] = [time.perf_counter()]

        assert app.session is not None
        app.session.subscribe(note_end)
        app.main.start_turn("write a lot")
        while not app.main.transcript.turns:
            await asyncio.sleep(0.001)
        start = time.perf_counter()
        latencies: list[float] = []
        while not frames:  # keys typed until the whole answer is on screen
            before = len(prompt.text)
            t0 = time.perf_counter()
            app.post_message(events.Key("x", "x"))
            while len(prompt.text) == before:
                await asyncio.sleep(0.0005)
            latencies.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.02)
        on_screen = frames[0]
    latencies.sort()
    print(
        f"streamed {total} chars in {CHUNK}-character deltas: provider done in "
        f"{ended_at[0] - start:.2f} s, whole answer on screen after {on_screen - start:.2f} s"
    )
    print(
        f"last delta → whole answer on screen: {on_screen - delta_at[0]:.2f} s; "
        f"turn end → whole answer on screen: {on_screen - ended_at[0]:.2f} s (target <= 0.5 s)"
    )
    print(
        f"key presses during the stream: {len(latencies)}; latency median "
        f"{statistics.median(latencies):.1f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms, "
        f"worst {latencies[-1]:.1f} ms"
    )


def answer(*, paragraphs: bool) -> str:
    """200 KB of words, 12 to a line, in paragraphs of 20 lines (or one long paragraph)."""
    words = ["lorem", "ipsum", "dolor", "sitam"]
    text = ""
    for n in range(TOKENS):
        text += words[n % 4][:3] + ("\n" if n % 12 == 11 else " ")
        if paragraphs and n % 240 == 239:
            text += "\n"
    return text


BLOCKS = [
    {"code": "open('notes.txt', 'w').write('a\\nb\\n')\nimport os\nos.remove('README.md')"},
    {"code": "for n in range(200):\n    print('line', n)"},
    {"code": "x = 0\n1 / x"},
]


def main() -> int:
    one_paragraph = "--one-paragraph" in sys.argv[1:]
    blocks = BLOCKS if "--blocks" in sys.argv[1:] else []
    text = answer(paragraphs=not one_paragraph)
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "workspace"
        home.mkdir()
        workspace.mkdir()
        (workspace / "README.md").write_text("# Project\n", encoding="utf-8")
        os.environ["VIS_HOME"] = str(home)
        script = Path(tmp) / "script.json"
        steps = [*blocks, {"text": text, "chunk": CHUNK}]
        script.write_text(json.dumps(steps), encoding="utf-8")
        asyncio.run(measure(workspace, script, len(text)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
