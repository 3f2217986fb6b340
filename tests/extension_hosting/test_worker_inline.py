"""A plain function's tool runs on the worker's loop itself (no thread hop), and still neither
holds up the worker's other calls while it blocks nor loses a coroutine it returns."""

from __future__ import annotations

from pathlib import Path

from .harness import code_turn, install_extension, open_host, run_turn, write_script

HOLDER = '''
import sys
import threading

import vis_core.extension as vis


def hold() -> list:
    """Wait until another extension opens the gate; where it ran."""
    gate = sys.__dict__.setdefault("_vis_test_gate", threading.Event())
    (vis.workspace_root() / "holding").write_text("yes")
    return [gate.wait(10), threading.current_thread() is threading.main_thread()]


async def _later() -> str:
    return "later"


def later():
    """A plain function that returns a coroutine."""
    return _later()


vis.register_extension(vis.Extension(
    name="holder", alias="holder", description="Blocks.",
    symbols=[vis.Symbol(hold), vis.Symbol(later)],
))
'''

OPENER = '''
import sys
import threading

import vis_core.extension as vis


def open_gate() -> bool:
    """Open the gate another extension waits on."""
    sys.__dict__.setdefault("_vis_test_gate", threading.Event()).set()
    return True


vis.register_extension(vis.Extension(
    name="opener", alias="opener", description="Opens.", symbols=[vis.Symbol(open_gate)],
))
'''

BLOCK = """
import asyncio, json, pathlib
holding = asyncio.ensure_future(holder.hold())
for _ in range(1000):  # until hold runs: the gate is opened by a call that comes after it
    if pathlib.Path("holding").exists():
        break
    await asyncio.sleep(0.01)
opened = await opener.open_gate()
held = await holding
print(json.dumps({"held": held, "opened": opened, "later": await holder.later()}))
"""


async def test_a_blocking_plain_tool_on_the_loop_lets_other_calls_through(
    vis_home: Path, tmp_path: Path, script_path: Path
) -> None:
    install_extension(vis_home, "holder", HOLDER)
    install_extension(vis_home, "opener", OPENER)
    write_script(script_path, code_turn(BLOCK))
    host = await open_host(tmp_path, script_path)
    try:
        outcome = await run_turn(host)
    finally:
        await host.close()
    printed = outcome.printed()
    # hold ran on the worker's loop (its main thread) and was let go by a call served meanwhile
    assert printed == {"held": [True, True], "opened": True, "later": "later"}
