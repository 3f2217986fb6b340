"""Figure: what one hold of the model's processes costs (``model_stopped``: enter, leave;
host git takes one around every call), in wall and CPU milliseconds of this process (median
of the holds; the wall time mostly waits for the stops to land), with no
model process, with many single-threaded ones (a jailed shell's 100 ``sleep``), with
multi-threaded ones (10 jailed Pythons of 8 threads each), and with those whose main thread
exited (``Z`` while the others run: each thread is read), and how many processes were held.
Run: ``.venv/bin/python bench/quiet_hold.py [HOLDS]`` (default 200).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from vis_core.system.quiet import held_processes, model_stopped
from vis_core.system.shell import ShellManager

SLEEPERS = "for i in $(seq 100); do sleep 1000 & done; wait"
THREADED = (
    "import ctypes, sys, threading, time\n"
    "for _ in range(7):\n"
    "    threading.Thread(target=time.sleep, args=(1000,)).start()\n"
    "if sys.argv[1] == 'exit':\n"
    "    ctypes.CDLL(None).syscall(60, 0)  # only the main thread ends: its leader shows Z\n"
    "time.sleep(1000)\n"
)
SHAPES = {
    "none": (None, 0),
    "100 single-threaded": (SLEEPERS, 100),
    "10 of 8 threads": ("for i in $(seq 10); do python3 t.py stay & done; wait", 10),
    "10 of 8 threads, main exited": ("for i in $(seq 10); do python3 t.py exit & done; wait", 10),
}


def holds(count: int) -> tuple[float, float]:
    """The median wall and CPU milliseconds of ``count`` holds."""
    wall, cpu = [], []
    for _ in range(count):
        started, used = time.perf_counter(), time.thread_time()
        with model_stopped():
            pass
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.thread_time() - used) * 1000)
    return statistics.median(wall), statistics.median(cpu)


async def main(count: int) -> None:
    for shape, (command, expected) in SHAPES.items():
        with tempfile.TemporaryDirectory() as folder:
            workspace = Path(folder)
            (workspace / "t.py").write_text(THREADED)
            shells = ShellManager()
            try:
                if command is not None:
                    await shells.start(
                        command,
                        cwd=workspace,
                        output_dir=workspace / "out",
                        jail_workspace=workspace,
                    )
                    while len(held_processes()) < expected + 4:  # keeper, bwrap twice, bash
                        await asyncio.sleep(0.05)
                    await asyncio.sleep(0.5)  # the threads started, the main threads exited
                wall, cpu = await asyncio.to_thread(holds, count)
                held = len(held_processes())
                print(f"{shape}: {wall:.2f} ms a hold, {cpu:.2f} ms CPU ({held} processes held)")
            finally:
                await shells.close_all()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if sys.argv[1:] else 200))
