"""Benchmark: 1,000 patches to one 10,000-line file; prints the median time per patch."""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from vis_core.tools import ToolContext
from vis_core.tools.edit import patch_file
from vis_core.tools.files import cat_file

LINES = 10_000
PATCHES = 1_000


async def run(suffix: str) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        name = f"big{suffix}"
        (root / name).write_text("".join(f"value_{i} = {i}  # line {i}\n" for i in range(LINES)))
        ctx = ToolContext(root, "bench", root / "out")
        version = int(cat_file(ctx, name).split("\n", 1)[0].rsplit("@", 1)[1].split()[0])
        times = []
        for n in range(PATCHES):
            line = 1 + (n * 9973) % LINES
            edits = [{"start": line, "end": line, "text": f"value_{line} = {n}  # patched\n"}]
            start = time.perf_counter()
            result = await patch_file(ctx, name, version, edits)
            times.append(time.perf_counter() - start)
            version = result.version
        return times


async def run_rebased() -> list[float]:
    """Every patch is against a version that someone else changed since (difflib rebase)."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        path = root / "big.txt"
        path.write_text("".join(f"value_{i} = {i}\n" for i in range(LINES)))
        ctx = ToolContext(root, "bench", root / "out")
        times = []
        for n in range(50):
            cat_file(ctx, "big.txt", 1, 1)
            version = ctx.versions.latest(str(path.resolve())).number
            text = path.read_text()
            path.write_text(f"# outside change {n}\n" + text)
            edits = [{"start": 5000, "end": 5000, "text": f"rebased = {n}\n"}]
            start = time.perf_counter()
            await patch_file(ctx, "big.txt", version, edits)
            times.append(time.perf_counter() - start)
        return times


def report(label: str, times: list[float]) -> None:
    ms = sorted(t * 1000 for t in times)
    print(
        f"{label:34} median {statistics.median(ms):6.2f} ms  p95 {ms[int(len(ms) * 0.95)]:6.2f} ms"
        f"  max {ms[-1]:6.2f} ms  ({len(ms)} patches)"
    )


def main() -> None:
    print(f"{PATCHES:,} patches to one {LINES:,}-line file (target: median <= 5 ms)")
    report(".txt (no syntax check)", asyncio.run(run(".txt")))
    report(".py (syntax checked)", asyncio.run(run(".py")))
    report(".txt rebased over an outside change", asyncio.run(run_rebased()))


if __name__ == "__main__":
    main()
