"""Figure: how long a sandbox takes to start and run its first block, jailed (bubblewrap)
beside unjailed in the same run, and the one-time jail check (`bwrap ... true`).

The workspace is a checkout of FOLDERS folders, one in 100 with another agent's settings
(``.claude/``), which each jail looks through (a bounded look) and keeps read-only.
Each round starts a fresh Sandbox child, runs ``1`` and closes it; ROUNDS rounds each way,
alternating. Printed: the medians, their difference and ratio, and the check's time.
Run: ``.venv/bin/python bench/jail_start.py``.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

ROUNDS = 20
FOLDERS = 3_000  # 30 packages of 100 folders


async def _call(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return None


async def _one(workspace: Path, jail: bool) -> float:
    from vis_core.sandbox import Sandbox

    box = Sandbox(workspace=workspace, call_tool=_call, tools=lambda: [], jail=jail)
    started = time.perf_counter()
    result = await box.run("1")
    took = time.perf_counter() - started
    await box.close()
    assert result.error is None, result.error
    return took


async def main() -> None:
    from vis_core.system.jail_check import jail_problem
    from vis_core.system.nested_gits import SETTLED_NS

    with tempfile.TemporaryDirectory() as top:
        os.environ["VIS_HOME"] = str(Path(top) / "home")
        workspace = Path(top) / "ws"
        workspace.mkdir()
        for n in range(FOLDERS):
            folder = workspace / f"pkg{n // 100}" / f"part{n % 100}"
            folder.mkdir(parents=True)
            if n % 100 == 0:
                (folder / ".claude").mkdir()
        time.sleep(SETTLED_NS / 1e9)  # a checkout's folders, not ones a block just made
        started = time.perf_counter()
        problem = jail_problem()
        check = time.perf_counter() - started
        if problem is not None:
            print(f"the jail cannot run here: {problem}")
            return
        times: dict[bool, list[float]] = {False: [], True: []}
        for _ in range(ROUNDS):
            for jail in (False, True):
                times[jail].append(await _one(workspace, jail))
    plain, jailed = statistics.median(times[False]), statistics.median(times[True])
    print(f"workspace: {FOLDERS:,} folders, {FOLDERS // 100} with .claude/")
    print(f"first block, unjailed: {plain * 1000:.1f} ms median of {ROUNDS}")
    print(f"first block, jailed:   {jailed * 1000:.1f} ms median of {ROUNDS}")
    print(f"difference: {(jailed - plain) * 1000:+.1f} ms ({jailed / plain:.2f}x)")
    print(f"jail check (once per process): {check * 1000:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
