"""Calls back into an extension that waits on Vis: hooks run inside the waiting call, tools in
a turn that the extension awaits (``vis.run``) are refused, and nothing deadlocks."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from .harness import code_turn, install_extension, open_host, run_turn, write_script

LOOPY = '''
import json

import vis_core.extension as vis


def search() -> str:
    """grep through vis.tools while this extension's fs_access check guards the file tools."""
    return str(vis.tools.grep("needle", literal=True))


def ask(script: str) -> str:
    """Run one turn in a new session whose model calls back into this extension."""
    turn = vis.run("Call me back", provider="scripted", script=script, timeout=60)
    return json.dumps({"status": turn["status"], "content": turn["content"]})


def ping() -> str:
    """Answer pong."""
    return "pong"


def check(call):
    vis.state["access"] = vis.state.get("access", []) + [call["path"]]


def after_block(call):
    vis.state["blocks"] = vis.state.get("blocks", 0) + 1


vis.register_extension(vis.Extension(
    name="loopy", description="Calls back into itself.", alias="loopy",
    symbols=[vis.Symbol(search), vis.Symbol(ask), vis.Symbol(ping)],
    ctx=lambda env: {"loopy_ctx": "from loopy"},
    op_hooks=[vis.OpHook("fs_access", check),
              vis.OpHook("python_execution", after_block, phase="after")],
))
'''

NESTED = """
import json
try:
    await loopy.ping()
except Exception as exc:
    seen = f"{type(exc).__name__}: {exc}"
else:
    seen = "not refused"
open("nested.txt", "w").write(json.dumps({"seen": seen, "ctx": session.get("loopy_ctx")}))
"""


def within(seconds: float, make: Callable[[], Awaitable[Any]]) -> Any:
    """Run ``make()`` on a loop in a daemon thread; fail instead of hanging on a deadlock."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = asyncio.run(make())
        except BaseException as exc:  # reported to the test below
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"deadlocked: no answer within {seconds:g} s"
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_fs_access_hook_of_the_calling_extension_does_not_deadlock(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "loopy", LOOPY)
    (workspace / "notes.txt").write_text("a needle here\n", encoding="utf-8")
    write_script(script_path, code_turn("print(await loopy.search())"))

    async def scenario() -> Any:
        host = await open_host(workspace, script_path)
        try:
            outcome = await run_turn(host)
            [block] = outcome.blocks
            assert block.error is None, block.error
            return block.stdout, host.store.state_items("loopy")
        finally:
            await host.close()

    printed, state = within(60, scenario)
    assert "notes.txt" in printed and "a needle here" in printed
    assert str(workspace) in state["access"]  # the check ran, inside the waiting call


def test_vis_run_refuses_tool_calls_back_into_the_waiting_extension(
    vis_home: Path, workspace: Path, tmp_path: Path, script_path: Path
) -> None:
    install_extension(vis_home, "loopy", LOOPY)
    nested = write_script(tmp_path / "nested.yaml", code_turn(NESTED, reply="Nested done."))
    write_script(script_path, code_turn(f"print(await loopy.ask({str(nested)!r}))"))

    async def scenario() -> Any:
        host = await open_host(workspace, script_path)
        try:
            outcome = await run_turn(host)
            return outcome.printed(), host.store.state_items("loopy")
        finally:
            await host.close()

    turn, state = within(60, scenario)
    assert turn == {"status": "completed", "content": "Nested done."}
    seen = json.loads((workspace / "nested.txt").read_text(encoding="utf-8"))
    assert seen["seen"].startswith(
        "RuntimeError: ping was refused: its extension 'loopy' waits for this session's turn to end"
    )
    assert seen["ctx"] == "from loopy"  # its ctx still ran while the call was parked
    assert state["blocks"] == 2  # and its after hooks, for the nested block and the outer one


GUARD = '''
import time

import vis_core.extension as vis


def hold() -> str:
    """Keep this extension busy, then publish progress (which needs the event loop)."""
    time.sleep(0.5)
    vis.publish_activity(vis.ActivityPresentation("Hold", "still holding"))
    return "held"


def check(call):
    vis.state["checked"] = vis.state.get("checked", 0) + 1


vis.register_extension(vis.Extension(
    name="guard", description="Guards file access.", alias="guard",
    symbols=[vis.Symbol(hold, activity=vis.Activity(label="Hold"))],
    op_hooks=[vis.OpHook("fs_access", check)],
))
'''

CONCURRENT = """
import asyncio
held = asyncio.create_task(guard.hold())
await asyncio.sleep(0.2)
found = await grep("needle", literal=True)
print(await held, "needle" in str(found))
"""


def test_a_busy_extensions_fs_access_hook_does_not_stall_the_loop(
    vis_home: Path, workspace: Path, script_path: Path
) -> None:
    install_extension(vis_home, "guard", GUARD)
    (workspace / "notes.txt").write_text("a needle here\n", encoding="utf-8")
    write_script(script_path, code_turn(CONCURRENT))

    async def scenario() -> Any:
        host = await open_host(workspace, script_path)
        try:
            outcome = await run_turn(host)
            [block] = outcome.blocks
            assert block.error is None, block.error
            return block.stdout, host.store.state_items("guard")
        finally:
            await host.close()

    printed, state = within(60, scenario)
    assert printed.strip() == "held True"
    assert state["checked"] >= 1
