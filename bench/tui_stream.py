"""Figure: a scripted answer of 200 KB streamed in 16-character deltas as fast as the provider
emits them, while keys are typed into the prompt; prints the stream time, the time from the
core's TurnEnded to the whole answer on screen, and key latency (worst, p95, median).

A key's latency is the time from posting the key event to the character being in the prompt.
Run: ``.venv/bin/python bench/tui_stream.py``.
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

TOKENS = 50_000  # 200 KB of answer, streamed 16 characters at a time
CHARS_PER_TOKEN = 4
CHUNK = 16  # characters per streamed delta


async def measure(workspace: Path, script: Path) -> None:
    from textual import events

    from vis_core.host import HostOptions
    from vis_tui.app import VisApp

    app = VisApp(HostOptions(workspace=workspace, provider="scripted", script=script), frozen=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await asyncio.wait_for(app.ready.wait(), 30)
        await pilot.pause()
        prompt = app.main.prompt
        prompt.focus()
        ended_at: list[float] = []  # when the core emitted TurnEnded (saved, then published)

        def note_end(event: object) -> None:
            if type(event).__name__ == "TurnEnded":
                ended_at.append(time.perf_counter())

        assert app.session is not None
        app.session.subscribe(note_end)
        app.main.start_turn("write a lot")
        while not app.main.transcript.turns:
            await asyncio.sleep(0.001)
        start = time.perf_counter()
        latencies: list[float] = []
        total = TOKENS * CHARS_PER_TOKEN
        turn = next(iter(app.main.transcript.turns.values()))
        stream_seconds = 0.0
        turn_end = 0.0

        def rendering() -> bool:
            return app.main.turn_running or not turn.answers or len(turn.answers[0].source) < total

        while rendering():
            if not app.main.turn_running and not stream_seconds:
                turn_end = time.perf_counter()
                stream_seconds = turn_end - start
            before = len(prompt.text)
            t0 = time.perf_counter()
            app.post_message(events.Key("x", "x"))
            while len(prompt.text) == before:
                await asyncio.sleep(0.0005)
            if len(prompt.text) > before:
                latencies.append((time.perf_counter() - t0) * 1000)
            await asyncio.sleep(0.02)
        source_at = time.perf_counter()
        await pilot.pause()  # the frame that shows it
        rendered_at = time.perf_counter()
        frame_seconds = rendered_at - source_at
        rendered_seconds = rendered_at - start
        stream_seconds = (ended_at[0] - start) if ended_at else stream_seconds
        after_end = rendered_at - ended_at[0] if ended_at else rendered_at - turn_end
    latencies.sort()
    print(
        f"streamed {TOKENS} tokens ({TOKENS * CHARS_PER_TOKEN} chars): provider done in "
        f"{stream_seconds:.2f} s, Markdown fully rendered after {rendered_seconds:.2f} s"
    )
    print(
        f"turn end → full answer on screen: {after_end:.2f} s (target <= 0.5 s; "
        f"of which the last frame {frame_seconds:.2f} s)"
    )
    print(
        f"key presses during the stream: {len(latencies)}; latency median "
        f"{statistics.median(latencies):.1f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95)]:.1f} ms, "
        f"worst {latencies[-1]:.1f} ms"
    )


def main() -> int:
    words = ["lorem", "ipsum", "dolor", "sitam"]
    text = ""
    for n in range(TOKENS):
        text += words[n % 4][:3] + (" " if n % 12 else "\n")
        if n % 240 == 239:
            text += "\n"
    with tempfile.TemporaryDirectory() as tmp:
        home, workspace = Path(tmp) / "home", Path(tmp) / "workspace"
        home.mkdir()
        workspace.mkdir()
        os.environ["VIS_HOME"] = str(home)
        script = Path(tmp) / "script.json"
        script.write_text(json.dumps([{"text": text, "chunk": CHUNK}]), encoding="utf-8")
        asyncio.run(measure(workspace, script))
    return 0


if __name__ == "__main__":
    sys.exit(main())
