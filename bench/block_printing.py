"""Figure: what committing a running block's output (``BlockPrinted``) costs a block that
prints 10,000 lines, through the Host.

Each round opens a Host in a fresh workspace (the scripted provider answers with one block,
then text), makes a new session and submits one request; measured: the wall time from the
submit until the block finished, and the CPU time the Vis process (all its threads: the loop,
the store's writer) spent meanwhile, which the machine's other load does not stretch. Two
blocks: ``fast`` prints 10,000 lines at once; ``paced`` prints them in 20 bursts 0.1 s apart
(2 s of sleeping, taken off its wall), so its output is committed a stretch at a time while
it runs. Printed per block: the median and the lowest of ROUNDS rounds, and the BlockPrinted
events the last round stored with their characters. A first round, not counted, fills the
caches.
Run: ``.venv/bin/python bench/block_printing.py [ROUNDS]``.
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

ROUNDS = 5
BLOCKS = {
    "fast": ("for i in range(10_000):\n    print('line', i, 'of the output')", 0.0),
    "paced": (
        "import time\nfor i in range(10_000):\n    print('line', i, 'of the output')\n"
        "    if i % 500 == 499:\n        time.sleep(0.1)",
        2.0,
    ),
}


async def one_round(folder: Path, code: str) -> tuple[float, float, int, int]:
    """(the block's wall and Vis's CPU in seconds, BlockPrinted events stored, their
    characters)."""
    from vis_core.events import BlockFinished
    from vis_core.host import Host, HostOptions

    workspace = folder / "work"
    workspace.mkdir()
    script = folder / "script.json"
    script.write_text(json.dumps([{"code": code}, {"text": "done"}]), encoding="utf-8")
    host = await Host.open(HostOptions(workspace=workspace, provider="scripted", script=script))
    try:
        session = await host.new_session()
        finished = asyncio.Event()
        session.subscribe(lambda e: finished.set() if isinstance(e, BlockFinished) else None)
        started, cpu = time.perf_counter(), time.process_time()
        turn = asyncio.ensure_future(session.submit("print"))
        await finished.wait()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        await turn
        printed = [e for e in host.store.events(session.id) if e.type == "BlockPrinted"]
        return wall, cpu, len(printed), sum(len(json.loads(e.data)["text"]) for e in printed)
    finally:
        await host.close()


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else ROUNDS
    for name, (code, asleep) in BLOCKS.items():
        walls: list[float] = []
        cpus: list[float] = []
        events = chars = 0
        for n in range(rounds + 1):
            with tempfile.TemporaryDirectory() as tmp:
                os.environ["VIS_HOME"] = str(Path(tmp) / "home")
                wall, cpu, events, chars = asyncio.run(one_round(Path(tmp), code))
            if n:  # the first fills the caches
                walls.append(wall - asleep)
                cpus.append(cpu)
        median, lowest = statistics.median(walls) * 1000, min(walls) * 1000
        print(
            f"{name}: block wall (minus its sleeps) median {median:.0f} ms, lowest {lowest:.0f}"
            f" ms; Vis CPU median {statistics.median(cpus) * 1000:.0f} ms; BlockPrinted stored:"
            f" {events} events, {chars:,} characters"
        )


if __name__ == "__main__":
    main()
