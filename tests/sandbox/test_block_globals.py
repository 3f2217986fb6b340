"""A block's globals given as an awaitable (the ``session`` dict): built while the child
starts, awaited once it runs, just before the block is sent."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from vis_core.sandbox import Sandbox


async def test_globals_are_awaited_once_the_child_runs(sandbox: Sandbox) -> None:
    child_ran: list[bool] = []

    async def build() -> dict[str, Any]:
        # the child starts (in a thread) while this runs: a start that waited for the
        # globals would never come
        async with asyncio.timeout(30):
            while sandbox._proc is None:
                await asyncio.sleep(0.01)
        child_ran.append(sandbox._proc.returncode is None)
        return {"session": {"id": "s1"}}

    result = await sandbox.run("print(session['id'])", globals=asyncio.ensure_future(build()))
    assert result.error is None and result.stdout == "s1\n"
    assert child_ran == [True]


async def test_none_from_the_awaitable_sets_no_globals(sandbox: Sandbox) -> None:
    async def build() -> None:
        return None

    result = await sandbox.run("print('session' in dir())", globals=asyncio.ensure_future(build()))
    assert result.error is None and result.stdout == "False\n"


async def test_interrupt_while_the_globals_are_built(sandbox: Sandbox, workspace: Path) -> None:
    marker = workspace / "ran.txt"
    building, release = asyncio.Event(), asyncio.Event()

    async def build() -> dict[str, Any]:
        building.set()
        await release.wait()
        return {"session": {}}

    code = f"open({str(marker)!r}, 'w').write('x')"
    task = asyncio.create_task(sandbox.run(code, globals=asyncio.ensure_future(build())))
    await building.wait()
    await sandbox.interrupt()  # Esc while the session dict is built: the block never starts
    release.set()
    result = await task
    assert result.error == "KeyboardInterrupt: the block was interrupted before it started"
    assert not marker.exists()
    assert (await sandbox.run("print('ok')")).stdout == "ok\n"
