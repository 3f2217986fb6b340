"""Time `vis --version` (target ≤ 150 ms wall): the CLI must not import heavy modules first."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 20


def main() -> None:
    vis = Path(sys.executable).with_name("vis")
    command = (
        [str(vis), "--version"]
        if vis.exists()
        else [sys.executable, "-m", "vis_core.cli", "--version"]
    )
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    print(
        f"vis --version: median {statistics.median(times):.1f} ms, "
        f"max {max(times):.1f} ms over {RUNS} runs (target ≤ 150 ms)"
    )


if __name__ == "__main__":
    main()
