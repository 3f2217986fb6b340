"""Figure: the CPU time a sandbox start and an extension worker start cost when Vis itself holds
much memory (a long TUI session, a test worker), beside the same starts from a small Vis.

Starting a child by ``fork`` copies the parent's page tables, a cost that grows with the
parent's memory; ``vfork`` does not copy them. This process first holds MEGABYTES of touched
memory, then starts ROUNDS sandbox children (unjailed, with the default memory and process
limits, each running ``1``) and ROUNDS load-only workers (each killed once started), and reads
the CPU time (user + system) this process and its waited-for children used per start (the
keeper, the child, its first block). Printed: milliseconds per start, for 0 and MEGABYTES.
At 300 MB, before the keeper applied the limits and the worker asked for its parent-death
signal itself (both forked Vis through a ``preexec_fn``): sandbox 12.4 + 96.4 ms, worker
spawn 9.8 + 13.9 ms; after: 2.3 + 94.2 ms and 0.3 + 0.4 ms.
Run: ``.venv/bin/python bench/spawn_from_big.py [MEGABYTES [ROUNDS]]``.
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import tempfile
from pathlib import Path
from typing import Any

MEGABYTES = 300
ROUNDS = 10


def _cpu() -> tuple[float, float]:
    mine = resource.getrusage(resource.RUSAGE_SELF)
    theirs = resource.getrusage(resource.RUSAGE_CHILDREN)
    return mine.ru_utime + mine.ru_stime, theirs.ru_utime + theirs.ru_stime


async def _nothing(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return None


async def _sandboxes(workspace: Path, rounds: int) -> None:
    from vis_core.sandbox import Sandbox
    from vis_core.system.lifetime import ChildLimits

    limits = ChildLimits(memory_mb=8192, processes=4096)  # the settings' defaults
    for _ in range(rounds):
        box = Sandbox(
            workspace=workspace, call_tool=_nothing, tools=lambda: [], jail=False, limits=limits
        )
        result = await box.run("1")
        await box.close()
        assert result.error is None, result.error


def _workers(rounds: int) -> None:
    from vis_core.extension_host.registration import WORKER
    from vis_core.system.process import ChildProcess

    for _ in range(rounds):
        worker = ChildProcess(WORKER, env={}, cwd=None)
        worker.process.kill()
        worker.process.wait()


def _per_start(before: tuple[float, float], rounds: int) -> str:
    mine, theirs = _cpu()
    return (
        f"Vis {(mine - before[0]) / rounds * 1000:5.1f} ms, "
        f"children {(theirs - before[1]) / rounds * 1000:5.1f} ms"
    )


async def main(megabytes: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory() as top:
        os.environ["VIS_HOME"] = str(Path(top) / "home")
        workspace = Path(top) / "ws"
        workspace.mkdir()
        held: list[bytearray] = []
        for size in (0, megabytes):
            while len(held) < size:
                held.append(bytearray(b"\1") * (1 << 20))  # touched: its pages are mapped
            await _sandboxes(workspace, 1)  # imports and caches out of the way
            before = _cpu()
            await _sandboxes(workspace, rounds)
            sandbox = _per_start(before, rounds)
            before = _cpu()
            _workers(rounds)
            worker = _per_start(before, rounds)
            print(f"Vis holding {size:4d} MB: sandbox start + block: {sandbox}")
            print(f"{'':22s}worker spawn (killed at once): {worker}")


if __name__ == "__main__":
    given = sys.argv[1:]
    asyncio.run(main(int(given[0]) if given else MEGABYTES, int(given[1]) if given[1:] else ROUNDS))
