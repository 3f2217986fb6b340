"""Benchmark: per-call cost of a trivial host tool from a sandbox block, and of an empty block."""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from vis_core.sandbox import Sandbox, ToolEntry

CALLS = 1_000
EMPTY_BLOCKS = 200


async def _ping(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return args[0] if args else None


CALL_BLOCK = f"""
import time as _t
_times = []
for _i in range({CALLS}):
    _s = _t.perf_counter()
    await ping(_i)
    _times.append(_t.perf_counter() - _s)
_times.sort()
print(_times[len(_times) // 2])
del _t, _times, _i, _s
"""


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        box = Sandbox(workspace=Path(folder), call_tool=_ping, tools=lambda: [ToolEntry("ping")])
        try:
            await box.run("pass")  # start the child
            result = await box.run(CALL_BLOCK)
            if result.error:
                sys.exit(result.error)
            per_call = float(result.stdout.strip())
            empty: list[float] = []
            for _ in range(EMPTY_BLOCKS):
                started = time.perf_counter()
                await box.run("")
                empty.append(time.perf_counter() - started)
        finally:
            await box.close()
    print(
        f"tool call round trip: median {per_call * 1000:.3f} ms per call "
        f"({CALLS:,} calls in one block; target ≤ 0.3 ms)"
    )
    print(
        f"empty block: median {statistics.median(empty) * 1000:.3f} ms "
        f"({EMPTY_BLOCKS} blocks; target ≤ 5 ms)"
    )


if __name__ == "__main__":
    asyncio.run(main())
