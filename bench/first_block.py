"""Figure: what a new session's first block pays for its extension worker, through the Host.

Each round opens a Host in a fresh workspace (the scripted provider answers with one block,
``1``, then text), makes a new session and submits one request. Measured: the wall time from
the submit until the block finished (the person's first-block latency), the part of it spent
building the block's ``session`` dict (``SessionKit.session_globals``: with the bundled
extensions, the todo extension's ``ctx``, which starts the session's extension worker), and the
CPU time (user + system, all threads) of that worker from its start until the block finished,
read from its process CPU clock before the Host closes. A first round, not counted, fills the
caches (Vis's dataclass code, kept as the ``vis`` command keeps it, and the bundled
declarations), as after a person's first run. Printed: the median and the lowest of ROUNDS
rounds. STREAM_MS (default 0): the scripted model takes that long to write the block's code
after its call began (a real model takes seconds), so the figures show what the person still
waits once the code has arrived (the STREAM_MS are taken off the first).
Run (bytecode compiled first): ``.venv/bin/python bench/precompile.py &&
.venv/bin/python bench/first_block.py [ROUNDS [STREAM_MS]]``.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROUNDS = 10
SCRIPT = '[{{"code": "1", "delay_ms": {stream_ms}}}, {{"text": "done"}}]'
_libc = ctypes.CDLL(None, use_errno=True)


def _cpu_of(pid: int) -> float:
    """The CPU seconds (user + system) process ``pid`` used so far, all its threads, to the
    nanosecond (``/proc``'s figures count in ticks of 10 ms)."""
    clock = ctypes.c_int()
    if _libc.clock_getcpuclockid(pid, ctypes.byref(clock)) != 0:
        raise OSError(f"no CPU clock for process {pid}")
    return time.clock_gettime(clock.value)


def _watch(found: dict[str, Any]) -> None:
    """Note the time ``session_globals`` takes and the pid of each worker started."""
    from vis_core.extension_host.session_kit import SessionKit
    from vis_core.extension_host.worker_client import SessionWorker

    globals_of = SessionKit.session_globals
    start = SessionWorker._start

    async def timed(self: SessionKit, session: Any) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            return await globals_of(self, session)
        finally:
            found["globals"] = time.perf_counter() - started

    def started(self: SessionWorker, generation: int | None = None) -> Any:
        channel = start(self, generation)
        found.setdefault("pids", set()).add(self.pid)
        return channel

    SessionKit.session_globals = timed  # type: ignore[method-assign]
    SessionWorker._start = started  # type: ignore[method-assign]


async def one_round(
    folder: Path, found: dict[str, Any], stream_ms: int
) -> tuple[float, float, float]:
    """(first block's wall, its ``session`` dict's wall, the workers' CPU) in seconds."""
    from vis_core.events import BlockFinished
    from vis_core.host import Host, HostOptions

    workspace = folder / "work"
    workspace.mkdir()
    script = folder / "script.json"
    script.write_text(SCRIPT.format(stream_ms=stream_ms), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    finished: list[float] = []
    try:
        session = await host.new_session()
        session.subscribe(
            lambda e: finished.append(time.perf_counter()) if isinstance(e, BlockFinished) else None
        )
        found.clear()
        started = time.perf_counter()
        await session.submit("go")
        assert finished, "the block did not run"
        cpu = sum(_cpu_of(pid) for pid in found.get("pids", ()))
    finally:
        await host.close()
    return finished[0] - started - stream_ms / 1000, found.get("globals", 0.0), cpu


async def main(rounds: int, stream_ms: int = 0) -> None:
    with tempfile.TemporaryDirectory() as top:
        os.environ["VIS_HOME"] = str(Path(top) / "home")
        from vis_core import codegen_cache

        codegen_cache.install()  # as the vis command does: what it keeps, the workers read
        found: dict[str, Any] = {}
        _watch(found)
        taken = []
        for index in range(rounds + 1):
            folder = Path(top) / f"round{index}"
            folder.mkdir()
            taken.append(await one_round(folder, found, stream_ms))
            if index == 0:
                codegen_cache.save()
    taken = taken[1:]  # the first round fills the caches
    load = os.getloadavg()[0]
    print(f"a new session's first block, {rounds} rounds, code in {stream_ms} ms, load {load:.1f}:")
    for name, values in zip(
        ("submit → block finished (-code)", "  of it: the session dict", "worker CPU"),
        zip(*taken, strict=True),
        strict=True,
    ):
        print(
            f"  {name:28s} median {statistics.median(values) * 1000:6.1f} ms, "
            f"lowest {min(values) * 1000:6.1f} ms"
        )


if __name__ == "__main__":
    given = sys.argv[1:]
    asyncio.run(main(int(given[0]) if given else ROUNDS, int(given[1]) if given[1:] else 0))
