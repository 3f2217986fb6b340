"""Figure: `vis run` with one scripted answer, process start to exit, beside `import textual.app`.

Both run as fresh processes, in turn (A B A B …), so a drifting machine affects both alike;
printed: each median and the median of the pairwise ratios. Target: ≤ 1.0× the anchor.
The figure's script is JSON; the same answer as YAML follows, for comparison: a YAML script
adds the stand-in model's own parser (importing yaml), which no real provider loads.
Run: ``.venv/bin/python bench/run_startup.py [FOLDER]``; with FOLDER, `vis run` runs in that
folder (a large checkout) instead of an empty one.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from precompile import compile_vis

RUNS = 15
# the same one answer in the two forms of scripted-provider.md; the first is the figure
SCRIPTS = {
    "JSON": '[{"text": "Hello from the script."}]',
    "YAML": '- text: "Hello from the script."\n',
}


def timed(command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, cwd=cwd, env=env)
    return time.perf_counter() - started


def main() -> None:
    compile_vis()  # as an installed Vis has it (bench/precompile.py)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        workspace = folder / "work"
        workspace.mkdir()
        if len(sys.argv) > 1:
            workspace = Path(sys.argv[1]).resolve()
        env = {**os.environ, "VIS_HOME": str(folder / "home")}
        anchor = [sys.executable, "-c", "import textual.app"]
        vis = Path(sys.executable).with_name("vis")
        for kind, text in SCRIPTS.items():
            script = folder / f"script.{kind.lower()}"
            script.write_text(text, encoding="utf-8")
            run = [str(vis), "run", "--provider", "scripted", "--script", str(script), "hi"]
            timed(run, cwd=workspace, env=env)  # warm-up: the database is created once
            timed(anchor)
            pairs = [(timed(run, cwd=workspace, env=env), timed(anchor)) for _ in range(RUNS)]
            runs = [a for a, _ in pairs]
            anchors = [b for _, b in pairs]
            ratio = statistics.median(a / b for a, b in pairs)
            print(
                f"vis run, one scripted answer ({kind} script): median "
                f"{statistics.median(runs) * 1000:.0f} ms; import textual.app: median "
                f"{statistics.median(anchors) * 1000:.0f} ms; ratio {ratio:.2f}x over {RUNS} "
                "pairs (target ≤ 1.0x)"
            )


if __name__ == "__main__":
    main()
