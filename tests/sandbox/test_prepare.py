"""``Sandbox.prepare``: the child starts while the model writes a block, and the block runs in
it; what that start says goes with the block; Esc and close still hold."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from processes import alive

from vis_core.sandbox import Sandbox


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(3000):  # up to a minute: a loaded machine starts children slowly
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the condition never held")


async def test_the_block_runs_in_the_child_started_ahead(sandbox: Sandbox) -> None:
    task = sandbox.prepare()
    assert task is not None
    await task
    proc = sandbox._proc
    assert proc is not None and proc.returncode is None
    assert sandbox.prepare() is None  # it runs: nothing more to start
    result = await sandbox.run("print('ran')")
    assert result.error is None and result.stdout == "ran\n" and result.restarted is None
    assert sandbox._proc is proc


async def test_what_the_start_ahead_says_goes_with_the_block(sandbox: Sandbox) -> None:
    await sandbox.run("kept = 41")
    proc = sandbox._proc
    assert proc is not None
    proc.kill()
    await proc.wait()
    task = sandbox.prepare()
    assert task is not None
    await task
    result = await sandbox.run("print(kept + 1)")
    assert result.stdout == "42\n"
    assert result.restarted is not None and "was restarted" in result.restarted
    assert (await sandbox.run("print(1)")).restarted is None  # said once


async def test_esc_while_the_start_ahead_holds_the_child(sandbox: Sandbox) -> None:
    sandbox.prepare()
    block = asyncio.ensure_future(sandbox.run("print('never')"))
    await _until(lambda: sandbox._busy)  # the block waits for the start ahead
    await sandbox.interrupt()
    result = await block
    assert result.error == "KeyboardInterrupt: the block was interrupted before it started"
    assert (await sandbox.run("print('ok')")).stdout == "ok\n"


async def test_close_during_the_start_ahead_leaves_no_child(sandbox: Sandbox) -> None:
    sandbox.prepare()
    await _until(lambda: sandbox._proc is not None)
    proc = sandbox._proc
    assert proc is not None
    await sandbox.close()
    assert not alive(proc.pid)
