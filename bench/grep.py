"""Benchmark: Vis grep (ripgrep path and Python path) beside rg and grep -rn on 20,000 files."""

from __future__ import annotations

import asyncio
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from vis_core.tools import ToolContext
from vis_core.tools.search import search

FILES = 20_000
DIRS = 200
LINES = 40
RUNS = 5
WORDS = ["alpha", "beta", "gamma", "delta", "value", "result", "config", "item", "count", "node"]


def make_tree(root: Path) -> None:
    rng = random.Random(7)
    for index in range(FILES):
        folder = root / f"pkg{index % DIRS:03d}" / f"sub{index % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        rows = []
        for line in range(LINES):
            a, b = rng.choice(WORDS), rng.choice(WORDS)
            if line == 0:
                rows.append(f"def {a}_{b}_handler(request, {b}):")
            elif rng.random() < 0.002:
                rows.append(f"    needle_literal = {a}.{b}  # marker")
            else:
                rows.append(f"    {a}_{line} = compute({b}, {line})")
        (folder / f"mod{index}.py").write_text("\n".join(rows) + "\n")


def timed(fn) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        root.mkdir()
        start = time.perf_counter()
        make_tree(root)
        print(f"tree: {FILES:,} files in {time.perf_counter() - start:.1f}s at {root}")
        ctx = ToolContext(root, "bench", Path(tmp) / "out")
        queries = [
            ("literal", "needle_literal", True),
            ("regex", r"def \w+_gamma_handler\(", False),
        ]
        rg = shutil.which("rg")
        print(f"median of {RUNS} runs, seconds")
        print(f"{'query':8} {'vis(rg)':>9} {'vis(py)':>9} {'rg':>9} {'grep -rn':>9}  ratio vis/rg")
        for name, query, literal in queries:
            flags = ["-F"] if literal else []
            vis_rg = (
                timed(
                    lambda q=query, lit=literal: asyncio.run(
                        search(ctx, q, literal=lit, case="sensitive", engine="rg")
                    )
                )
                if rg
                else float("nan")
            )
            vis_py = timed(
                lambda q=query, lit=literal: asyncio.run(
                    search(ctx, q, literal=lit, case="sensitive", engine="python")
                )
            )
            plain_rg = (
                timed(
                    lambda q=query, f=flags: subprocess.run(
                        [rg, "-n", *f, "-e", q, "."], cwd=root, capture_output=True
                    )
                )
                if rg
                else float("nan")
            )
            grep_flags = ["-F"] if literal else ["-E"]
            grep_query = query.replace(r"\w", "[[:alnum:]_]").replace(r"\(", r"\(")
            plain_grep = timed(
                lambda q=grep_query, f=grep_flags: subprocess.run(
                    ["grep", "-rn", *f, q, "."], cwd=root, capture_output=True
                )
            )
            ratio = vis_rg / plain_rg if rg else float("nan")
            cells = f"{vis_rg:9.3f} {vis_py:9.3f} {plain_rg:9.3f} {plain_grep:9.3f}"
            print(f"{name:8} {cells}  {ratio:.2f}x")
            sample = asyncio.run(search(ctx, query, literal=literal, case="sensitive"))
            print(f"         {sample.splitlines()[-1]}")
        if not rg:
            print("ripgrep (rg) is not installed: only the Python path was timed", file=sys.stderr)


if __name__ == "__main__":
    main()
