"""The first resume after `kill -9` mid-turn shows the cut-off turn with what it showed (its
block and what the block printed, the interruption said), not the bare request."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from warm_servers import vis_command

from vis_tui.app import VisApp

from .support import settled, started, vis_app

TICKS = 'import time\nfor i in range(60):\n    print("tick", i, flush=True); time.sleep(0.5)'


def _killed_mid_block(workspace: Path) -> None:
    """`vis run` in ``workspace``, killed with SIGKILL once its block printed ``tick 2``."""
    script = workspace.parent / "script.json"
    script.write_text(json.dumps([{"code": TICKS}, {"text": "never"}]))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    proc = subprocess.Popen(
        [*vis_command(env=env), "run", "--json", "--provider", "scripted"]
        + ["--script", str(script), "crash me"],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            event = json.loads(line)
            if event["type"] == "BlockPrinted" and "tick 2" in event["text"]:
                break
        else:
            raise AssertionError("vis run ended before its block printed tick 2")
    finally:
        proc.kill()
        proc.wait(timeout=10)


def _lines(app: VisApp) -> list[str]:
    strips = app.screen._compositor.render_strips()  # type: ignore[attr-defined]
    return ["".join(seg.text for seg in strip).rstrip() for strip in strips]


async def test_the_first_continue_after_kill_9_shows_the_cut_off_turn_with_its_block(
    workspace: Path,
) -> None:
    _killed_mid_block(workspace)
    app = vis_app(workspace, continue_=True)
    async with app.run_test(size=(100, 40)) as pilot:
        await started(app, pilot)
        shown = "\n".join(await settled(pilot, lambda: _lines(app)))
        (turn,) = app.main.transcript.turns.values()
        blocks = [p.block for p in getattr(turn, "parts", ()) if getattr(p, "block", None)]
    assert "› crash me" in shown
    assert 'print("tick", i, flush=True)' in shown  # the block's row
    assert "interrupted: Vis stopped (it was killed or crashed) while this ran" in shown
    assert "Cancelled. interrupted: Vis stopped" in shown
    assert [b.stdout.startswith("tick 0\ntick 1\ntick 2\n") for b in blocks] == [True]
